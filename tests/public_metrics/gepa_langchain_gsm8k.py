# ruff: noqa
# fmt: off
# gepa: LangChain adapter example on GSM8K, `evaluate_response(data, state)` (returns (score, feedback)).
# Source:  https://github.com/gepa-ai/gepa
# Path:    examples/langchain_adapter/gsm8k.py
# Commit:  b265bf9ca77fd8e8d82039d9f74911b8780fe1ce (read at this commit; the file last changed in 4746f3e4 (2026-05-28))
# URL:     https://github.com/gepa-ai/gepa/blob/b265bf9ca77fd8e8d82039d9f74911b8780fe1ce/examples/langchain_adapter/gsm8k.py
# Licence: MIT License, Copyright (c) 2025 Lakshya A Agrawal (LICENSE at the repository root)
# Changes: kept: the module docstring, `from __future__ import annotations`, `import re`,
#          `extract_final_integer` and `evaluate_response` (the `eval_fn` given to LangChainAdapter).
#          The published `from gepa.adapters.langchain_adapter import (... last_message_text ...)` needs
#          langchain-core, so it is replaced by a copy of `last_message_text` (with the `RolloutState`
#          alias it is annotated with, and `from typing import Any` for that alias), marked by a
#          `# --- from ... ---` comment, from src/gepa/adapters/langchain_adapter/langchain_adapter.py,
#          same commit (last changed in 4746f3e4 (2026-05-28)), same licence.
#          Left out: dataset loading, the rollout, argument parsing and main().
# Apart from the changes above, the code below is as published.

"""GEPA optimization on GSM8K grade-school math.

Dataset: openai/gsm8k (config "main"). The raw `answer` field contains a
worked solution followed by `#### <integer>`; we strip everything before the
delimiter to get the final integer answer (the same convention `verifiers` uses).

Run:
    uv run python examples/langchain_adapter/gsm8k.py
"""

from __future__ import annotations

import re
from typing import Any

# --- from src/gepa/adapters/langchain_adapter/langchain_adapter.py ---
RolloutState = dict[str, Any]


def last_message_text(state: RolloutState) -> str:
    """Return the text content of the last message in a rollout state.

    Works for both single-turn rollouts (`{"messages": [AIMessage(...)]}`) and
    agent rollouts that follow LangGraph's standard state shape.
    """
    messages = state.get("messages") if isinstance(state, dict) else None
    if not messages:
        return ""
    msg = messages[-1]
    content = getattr(msg, "content", msg)
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)


# --- from examples/langchain_adapter/gsm8k.py ---
def extract_final_integer(text: str) -> int | None:
    matches = re.findall(r"-?\d+", text)
    return int(matches[-1]) if matches else None


def evaluate_response(data: dict, state: dict) -> tuple[float, str]:
    correct_str = data["answer"].strip()
    try:
        correct_answer = int(correct_str)
    except ValueError:
        correct_answer = None

    response = last_message_text(state)
    predicted = extract_final_integer(response)

    if predicted is None:
        feedback = (
            f"Could not parse an integer from your response. "
            f"The correct answer is '{correct_str}'. "
            f"Ensure your final answer is a single integer on the last line."
        )
        if data.get("solution"):
            feedback += f"\n\nFull solution:\n{data['solution']}"
        return 0.0, feedback

    if correct_answer is not None and predicted == correct_answer:
        return 1.0, f"Correct. The answer is {correct_answer}."

    feedback = f"Incorrect. You answered {predicted}, but the correct answer is {correct_str}."
    if data.get("solution"):
        feedback += (
            f"\n\nFull solution:\n{data['solution']}\n\nThink about what takeaways you can learn from this solution."
        )
    return 0.0, feedback
