"""The return_value report of a case: the contract's verdict plus what the UI shows.

Built by the worker (contract.values), on stand-ins for the value the child described;
everything is capped: the feedback at FEEDBACK_LIMIT characters (with its original
length), the repr at 2K, at most MAX_SCORES named scores, and of "predictor_feedback" at
most MAX_PREDICTOR_FEEDBACK predictors (DSPy's own limit of described predictors), each
name at NAME_LIMIT and each text at FEEDBACK_LIMIT characters, with the number of
predictors left out.
"""

from __future__ import annotations

from skynet.returns import check_return
from skynet.safe import NAME_LIMIT, REPR_LIMIT, clip, safe_repr

FEEDBACK_LIMIT = 65536
MAX_SCORES = 100
# As skynet.dspy_part.PREDICTOR_LIMIT: no program the workbench runs has more predictors.
MAX_PREDICTOR_FEEDBACK = 50


def return_report(value: object, *, shown: str | None = None, feedback_length: int = 0) -> dict:
    """Validation outcome plus what the UI shows of the value. `shown` is the repr to show
    (default: the value's own); `feedback_length` the feedback's length where it was cut
    before it got here."""
    verdict = check_return(value)
    feedback = verdict.feedback
    scores = dict(list(verdict.scores.items())[:MAX_SCORES])
    per_predictor = list(verdict.predictor_feedback.items())
    kept = per_predictor[:MAX_PREDICTOR_FEEDBACK]
    return {
        "problem": verdict.problem,
        "params": verdict.params,
        "score": verdict.score,
        "bool_score": verdict.bool_score,
        "feedback": None if feedback is None else feedback[:FEEDBACK_LIMIT],
        "feedback_length": None if feedback is None else max(len(feedback), feedback_length),
        "scores": scores,
        "scores_omitted": len(verdict.scores) - len(scores),
        "predictor_feedback": {
            clip(name, NAME_LIMIT): text[:FEEDBACK_LIMIT] for name, text in kept
        },
        "predictor_feedback_omitted": len(per_predictor) - len(kept),
        "repr": safe_repr(value) if shown is None else clip(shown, REPR_LIMIT),
    }
