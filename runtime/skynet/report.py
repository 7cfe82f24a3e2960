"""JSON-safe summaries the child sends about what score() returned.

Everything is capped so a result frame stays far below wire.MAX_FRAME: the
feedback at 64K characters (with its original length), the repr at 2K, at
most MAX_SCORES named scores.
"""

from __future__ import annotations

from skynet.returns import check_return
from skynet.safe import safe_repr

FEEDBACK_LIMIT = 65536
MAX_SCORES = 100


def return_report(value: object) -> dict:
    """Validation outcome plus what the UI shows of the value."""
    verdict = check_return(value)
    feedback = verdict.feedback
    scores = dict(list(verdict.scores.items())[:MAX_SCORES])
    return {
        "problem": verdict.problem,
        "params": verdict.params,
        "score": verdict.score,
        "bool_score": verdict.bool_score,
        "feedback": None if feedback is None else feedback[:FEEDBACK_LIMIT],
        "feedback_length": None if feedback is None else len(feedback),
        "scores": scores,
        "scores_omitted": len(verdict.scores) - len(scores),
        "repr": safe_repr(value),
    }


def shrink(report: dict) -> dict:
    """A smaller copy for the (unexpected) case where the full one is too large."""
    smaller = dict(report)
    if isinstance(smaller.get("feedback"), str):
        smaller["feedback"] = smaller["feedback"][:4096]
    smaller["scores_omitted"] = smaller.get("scores_omitted", 0) + len(smaller.get("scores", {}))
    smaller["scores"] = {}
    return smaller
