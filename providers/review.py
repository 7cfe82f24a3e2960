""" "Review my feedback": ask the reflection model whether a case's feedback is useful.

Useful feedback, as the docs put it, says what is wrong with the output and what a
correct output looks like: that is what GEPA's reflection model reads to write the next
version. The review answers in the reader's language.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from providers.budget import Budget, Usage
from providers.catalogue import Model
from providers.clients import ProviderClient, RetryPolicy, prompt_token_bound

LANGUAGES = {"en": "English", "es": "Spanish", "hi": "Hindi"}
MAX_FIELD_CHARS = 4000

INSTRUCTIONS = """\
You review the feedback that a metric wrote about one output of an AI program. An \
optimizer's reflection model reads this feedback to write a better version of the \
program, so useful feedback says (1) what is wrong with the output and (2) what a \
correct output looks like. Judge the feedback, not the program.

The user message is JSON with the case's input, the program's output, the expected \
answer (or null), the metric's score and its feedback.

Answer in {language}, in at most 150 words, in three short parts:
1. Does the feedback say what is wrong? Yes or no, and why, in one sentence.
2. Does it say what a correct output looks like? Yes or no, and why, in one sentence.
3. A better feedback string for this case, or "The feedback is good as it is." """


def review_feedback(
    model: Model,
    *,
    input: object,
    output: object,
    expected: object,
    score: float | None,
    feedback: str,
    language: str,
    env: Mapping[str, str],
    timeout_s: float = 60.0,
    retry: RetryPolicy | None = None,
    budget: Budget | None = None,
) -> tuple[str, dict]:
    """The reflection model's review of `feedback`, and the usage of the call.

    `env` holds the key (the parent's environment). Raises clients.ProviderError when
    the provider fails, budget.BudgetExceeded when `budget` is spent, ValueError for a
    language other than en, es or hi.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
    case = {
        "input": _clip(input),
        "output": _clip(output),
        "expected": _clip(expected),
        "score": score,
        "feedback": feedback[:MAX_FIELD_CHARS],
    }
    key = env.get(model.api_key_env, "").strip() if model.needs_key else ""
    instructions = INSTRUCTIONS.format(language=LANGUAGES[language])
    reservation = None
    if budget is not None:  # claimed before the call, with the output cap that fits
        reservation = budget.reserve(model, prompt_token_bound(instructions, case))
    cap = reservation.output_tokens if reservation else None
    usage = Usage()
    started = time.monotonic()
    try:
        with ProviderClient(
            model, api_key=key, env=env, timeout_s=timeout_s, retry=retry
        ) as client:
            completion = client.complete(instructions, case, max_output_tokens=cap)
        cost = model.cost_usd(completion.input_tokens, completion.output_tokens)
        if reservation is not None:
            tokens = completion.input_tokens + completion.output_tokens
            budget.settle(reservation, tokens=tokens, usd=cost)
    finally:
        if reservation is not None:
            budget.release(reservation)  # a failed call's; a no-op once settled
    usage.record(
        input_tokens=completion.input_tokens,
        output_tokens=completion.output_tokens,
        cost_usd=cost,
        ms=(time.monotonic() - started) * 1000,
    )
    return completion.text.strip(), usage.as_dict() or {}


def _clip(value: object) -> object:
    """A value as it is, or shortened (as JSON text) so one huge case cannot fill the
    context window."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_FIELD_CHARS:
        return text[:MAX_FIELD_CHARS] + "…"
    return value
