"""Sample cases the check calls score() on: built-in ones, or three from JSONL.

A JSONL line is an object with "input" (object), "output" (any JSON value),
optional "expected" (object or null) and optional "observation" (object or
null, the recorded measurements of that case). Other keys are ignored, so
exports that carry ids or timestamps load as they are.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from skynet import OBSERVATION_KEYS

CASE_COUNT = 3
MAX_CASES_BYTES = 1 << 20


@dataclass(frozen=True)
class Case:
    input: dict
    output: object
    expected: dict | None = None
    observation: dict | None = None

    def measured(self) -> dict:
        """The observation skynet.observation() shows: every key, None where not recorded."""
        recorded = self.observation or {}
        return {key: recorded.get(key) for key in OBSERVATION_KEYS}

    def to_job(self) -> dict:
        return {
            "input": self.input,
            "output": self.output,
            "expected": self.expected,
            "observation": self.observation,
        }


# Shaped so the docs' "exact match" and "accuracy, speed and cost" examples
# pass: one right, one wrong, one right label; an observation on each so a
# REWARD_SPEC metric gets its speed and cost measured.
DEFAULT_CASES: tuple[Case, ...] = (
    Case(
        input={"question": "I was charged twice for my subscription this month."},
        output="billing",
        expected={"label": "billing"},
        observation={"duration_ms": 850.0, "cost_usd": 0.0004},
    ),
    Case(
        input={"question": "The app crashes when I open the settings page."},
        output="other",
        expected={"label": "bug"},
        observation={"duration_ms": 1200.0, "cost_usd": 0.0006},
    ),
    Case(
        input={"question": "How do I export all my invoices?"},
        output="account",
        expected={"label": "account"},
        observation={"duration_ms": 640.0, "cost_usd": 0.0003},
    ),
)


class CasesError(ValueError):
    """A JSONL cases file that cannot be used; `line` is 1-based, or None for the file."""

    def __init__(self, code: str, line: int | None = None, params: dict | None = None) -> None:
        super().__init__(code, line, params or {})
        self.code = code
        self.line = line
        self.params = params or {}


def _reject_constant(name: str) -> None:
    # NaN and Infinity are not JSON; Python's json accepts them by default.
    raise ValueError(name)


def _parse_line(text: str, line: int) -> Case:
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CasesError("bad_json", line, {"column": exc.colno}) from None
    except (ValueError, RecursionError):
        raise CasesError("bad_json", line, {"column": None}) from None
    return case_from_dict(obj, line)


def case_from_dict(obj: object, line: int | None = None) -> Case:
    """A Case from its JSON object (a JSONL line, or a row stored by the web app)."""
    if not isinstance(obj, dict):
        raise CasesError("not_object", line)
    if "input" not in obj:
        raise CasesError("input_missing", line)
    if not isinstance(obj["input"], dict):
        raise CasesError("input_not_object", line)
    if "output" not in obj:
        raise CasesError("output_missing", line)
    expected = obj.get("expected")
    if expected is not None and not isinstance(expected, dict):
        raise CasesError("expected_not_object", line)
    observation = obj.get("observation")
    if observation is not None:
        if not isinstance(observation, dict):
            raise CasesError("observation_not_object", line)
        for key in OBSERVATION_KEYS:
            value = observation.get(key)
            if value is None:
                continue
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                raise CasesError("observation_value_not_number", line, {"key": key})
        observation = {key: observation[key] for key in OBSERVATION_KEYS if key in observation}
    return Case(obj["input"], obj["output"], expected, observation)


def parse_cases_jsonl(text: str | bytes) -> list[Case]:
    """Exactly CASE_COUNT cases from JSON Lines; blank lines are skipped.

    Raises CasesError: cases_too_large, bad_json (params column), not_object,
    input_missing, input_not_object, output_missing, expected_not_object,
    observation_not_object, observation_value_not_number (params key),
    wrong_count (params count, expected).
    """
    if isinstance(text, bytes):
        if len(text) > MAX_CASES_BYTES:
            raise CasesError("cases_too_large", None, {"limit": MAX_CASES_BYTES})
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise CasesError("bad_json", None, {"column": None}) from None
    elif len(text.encode("utf-8", "surrogatepass")) > MAX_CASES_BYTES:
        raise CasesError("cases_too_large", None, {"limit": MAX_CASES_BYTES})
    text = text.removeprefix("\ufeff")
    cases = [
        _parse_line(raw, number)
        # Split on "\n" only: str.splitlines() would also split inside JSON
        # strings holding U+2028 and friends, which JSON allows unescaped.
        for number, raw in enumerate(text.split("\n"), start=1)
        if raw.strip()
    ]
    if len(cases) != CASE_COUNT:
        raise CasesError("wrong_count", None, {"count": len(cases), "expected": CASE_COUNT})
    return cases
