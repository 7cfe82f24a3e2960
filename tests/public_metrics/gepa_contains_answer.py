# ruff: noqa
# fmt: off
# gepa: the default adapter's evaluator, `ContainsAnswerEvaluator` (returns EvaluationResult).
# Source:  https://github.com/gepa-ai/gepa
# Path:    src/gepa/adapters/default_adapter/default_adapter.py
# Commit:  b265bf9ca77fd8e8d82039d9f74911b8780fe1ce (read at this commit; the file last changed in ad4e94c1 (2026-03-17))
# URL:     https://github.com/gepa-ai/gepa/blob/b265bf9ca77fd8e8d82039d9f74911b8780fe1ce/src/gepa/adapters/default_adapter/default_adapter.py
# Licence: MIT License, Copyright (c) 2025 Lakshya A Agrawal (LICENSE at the repository root)
# Changes: the module is cut down to what the evaluator uses: its header and imports, `DefaultDataInst`,
#          `EvaluationResult`, the `Evaluator` protocol and `ContainsAnswerEvaluator`, each as published.
#          Left out: the trajectory/record/chat TypedDicts, `ChatCompletionCallable` and the
#          `DefaultAdapter` class. gepa calls an INSTANCE: `DefaultAdapter` does
#          `self.evaluator = evaluator or ContainsAnswerEvaluator()` and then
#          `self.evaluator(data, assistant_response)`. Identical to gepa 0.1.4 as installed.
# Apart from the changes above, the code below is as published.

# Copyright (c) 2025 Lakshya A Agrawal and the GEPA contributors
# https://github.com/gepa-ai/gepa

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypedDict, cast

from gepa.core.adapter import EvaluationBatch, GEPAAdapter


# DataInst, Trajectory, RolloutOutput
class DefaultDataInst(TypedDict):
    input: str
    additional_context: dict[str, str]
    answer: str


class EvaluationResult(NamedTuple):
    score: float
    feedback: str
    objective_scores: dict[str, float] | None = None


# Callable that evaluates a response and returns (score, feedback, optional objective_scores)
class Evaluator(Protocol):
    def __call__(self, data: DefaultDataInst, response: str) -> EvaluationResult:
        """
        Evaluates a response and returns a score, feedback, and optional objective scores.
        """
        ...


class ContainsAnswerEvaluator:
    """Default evaluator that checks if the expected answer is contained in the response."""

    def __init__(self, failure_score: float = 0.0):
        self.failure_score = failure_score

    def __call__(self, data: DefaultDataInst, response: str) -> EvaluationResult:
        is_correct = data["answer"] in response
        score = 1.0 if is_correct else self.failure_score

        if is_correct:
            feedback = f"The generated response is correct. The response include the correct answer '{data['answer']}'"
        else:
            additional_context_str = "\n".join(f"{k}: {v}" for k, v in data["additional_context"].items())
            feedback = (
                f"The generated response is incorrect. The correct answer is '{data['answer']}'. "
                "Ensure that the correct answer is included in the response exactly as it is."
            )
            if additional_context_str:
                feedback += f" Here is some additional context that might be helpful:\n{additional_context_str}"

        return EvaluationResult(score=score, feedback=feedback, objective_scores=None)
