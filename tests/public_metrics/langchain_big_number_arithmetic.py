# ruff: noqa
# fmt: off
# langchain-gepa-adapter example (big-number arithmetic with a calculator tool): `evaluate_response(data, state)` (returns (score, feedback)).
# Source:  https://github.com/bryonkucharski/langchain-gepa-adapter
# Path:    examples/big_number_arithmetic.py
# Commit:  2e9df38e4ef147af6e6583fb23a4caa3b9a17fa1 (read at this commit; the file last changed in f37253d (2026-05-19))
# URL:     https://github.com/bryonkucharski/langchain-gepa-adapter/blob/2e9df38e4ef147af6e6583fb23a4caa3b9a17fa1/examples/big_number_arithmetic.py
# Licence: MIT License, Copyright (c) 2026 Bryon Kucharski (LICENSE at the repository root)
# Changes: kept the module docstring, `from __future__ import annotations`, `import re`,
#          `extract_final_integer`, `evaluate_response` (the `eval_fn` given to LangChainGEPAAdapter) and its
#          helper `_summarize_tool_calls`. The published `from langchain_gepa_adapter import (...,
#          last_message_text, ...)` needs langchain-core, so it is replaced by a copy of
#          `last_message_text` (with the `RolloutState` alias it is annotated with, and
#          `from typing import Any` for that alias), marked by a `# --- from ... ---` comment, from
#          src/langchain_gepa_adapter/adapter.py, same commit (last changed in f37253d (2026-05-19)),
#          same licence. Left out: the other imports, the `calculator` tool, dataset generation, the
#          rollout (a LangChain agent), argument parsing and main().
# Apart from the changes above, the code below is as published.

"""GEPA optimization of an agent that solves big-number arithmetic with a calculator tool.

Generates expressions like `(384729 * 192847) + (8273 * 99182) - 1029384` with
6-12 digit numbers — well past the size where chat models reliably do mental math.
The agent has access to a single `calculator(expr)` tool; the prompt being
optimized teaches it *when* and *how* to use the tool (decompose, verify, etc).

Run:
    uv run python examples/big_number_arithmetic.py
"""

from __future__ import annotations

import re
from typing import Any

# --- from src/langchain_gepa_adapter/adapter.py ---
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
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part)
            for part in content
        )
    return str(content)


# --- from examples/big_number_arithmetic.py ---
def extract_final_integer(text: str) -> int | None:
    matches = re.findall(r"-?\d+", text)
    return int(matches[-1]) if matches else None


def evaluate_response(data: dict, state: dict) -> tuple[float, str]:
    correct = int(data["answer"])
    response = last_message_text(state)
    predicted = extract_final_integer(response)

    tool_calls = _summarize_tool_calls(state)
    trace_note = f"\n\nTool-call trace:\n{tool_calls}" if tool_calls else "\n\n(No calculator calls were made.)"

    if predicted is None:
        return 0.0, (
            f"Could not parse an integer from your response. The correct answer is {correct}. "
            f"Ensure your final answer is a single integer on the last line.{trace_note}"
        )

    if predicted == correct:
        return 1.0, f"Correct. The answer is {correct}."

    return 0.0, (
        f"Incorrect. You answered {predicted}, but the correct answer is {correct}. "
        f"Expression: {data['expression']}.{trace_note}"
    )


def _summarize_tool_calls(state: dict) -> str:
    """Render each calculator call as `a op b -> result` for the feedback string."""
    messages = state.get("messages") or []
    lines: list[str] = []
    pending: dict[str, str] = {}  # tool_call_id -> "a op b"
    for msg in messages:
        for tc in getattr(msg, "tool_calls", None) or []:
            if tc.get("name") == "calculator":
                args = tc.get("args", {})
                pending[tc["id"]] = f"{args.get('a')} {args.get('op')} {args.get('b')}"
        tool_call_id = getattr(msg, "tool_call_id", None)
        if tool_call_id and tool_call_id in pending:
            lines.append(f"  {pending.pop(tool_call_id)} -> {msg.content}")
    return "\n".join(lines)
