"""CheckResult's dict form, and the code lists a translation layer relies on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from contract import codes
from contract.results import CaseResult, CheckResult, Hint

ROOT = Path(__file__).resolve().parents[2]
CASE_KEYS = {
    "index", "status", "score", "feedback", "feedback_length", "scores", "problem", "params",
    "repr", "duration_ms", "traceback", "exception", "stdout", "stderr", "stdout_truncated",
    "stderr_truncated", "observation", "call_args",
}  # fmt: skip


def test_fresh_result_lists_every_stage_pending():
    result = CheckResult()
    assert [s.id for s in result.stages] == list(codes.STAGES)
    assert {s.status for s in result.stages} == {"pending"}
    assert result.passed is None


def test_real_result_is_strict_json_and_round_trips(check):
    result = check(
        """
        def score(input, output, expected):
            if output == "other":
                raise ValueError("x")
            return 2.0, {"feedback": "OK"}
        """
    )
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert CheckResult.from_dict(json.loads(text)).to_dict() == data
    assert set(data) == {
        "passed",
        "failed_stage",
        "stages",
        "cases",
        "hints",
        "layers",
        "timeout_s",
        "sandbox_mode",
        "looks_like",
    }
    assert data["sandbox_mode"] == "bwrap"
    assert CASE_KEYS <= set(data["cases"][0])
    assert set(data["stages"][0]) == {"id", "status", "problem", "params", "problems", "warnings"}
    assert set(data["hints"][0]) == {"code", "case", "params"}


def test_from_dict_ignores_unknown_keys():
    data = CheckResult(cases=[CaseResult(index=0)], hints=[Hint("bool_score", 0)]).to_dict()
    data["cases"][0]["added_later"] = 1
    data["new_field"] = 2
    assert CheckResult.from_dict(data).cases[0].index == 0


def _literals(path: str, pattern: str) -> set[str]:
    return set(re.findall(pattern, (ROOT / path).read_text()))


def test_every_emitted_code_is_listed():
    problems = set(codes.PROBLEMS)
    assert _literals("runtime/skynet_child.py", r'_stage\(\s*"(\w+)"') <= problems
    assert _literals("contract/source.py", r'problem="(\w+)"') <= problems
    assert _literals("contract/engine.py", r'"(cases_\w+)"') <= problems
    assert _literals("runtime/skynet/rewardspec.py", r'_problem\(\s*"(\w+)"') | {
        "weight_not_number", "weight_not_finite", "reference_not_number", "reference_not_finite"
    } <= set(codes.REWARD_SPEC_CODES)  # fmt: skip
    assert _literals("runtime/skynet/signature.py", r'_bad\(\s*"(\w+)"') <= set(
        codes.SIGNATURE_REASONS
    )
    assert _literals("contract/hints.py", r'Hint\(\s*"(\w+)"') == set(codes.HINTS)
    assert _literals("contract/cases.py", r'CasesError\(\s*"(\w+)"') == set(codes.CASES_ERRORS)
    assert _literals("runtime/skynet/_model.py", r'ModelError\(\s*"(\w+)"') <= set(
        codes.MODEL_ERROR_CODES
    )
    assert _literals("contract/runner.py", r'"error": "(\w+)"') <= set(codes.MODEL_ERROR_CODES)
    assert _literals("contract/runner.py", r'"reason": "(\w+)"') <= set(codes.CRASH_REASONS)
    assert _literals("contract/static.py", r'"reason": "(\w+)"') <= set(codes.SKIP_REASONS)


def test_code_families_are_unique_identifiers():
    for name, family in codes.all_codes().items():
        assert len(family) == len(set(family)), name
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", code) for code in family), name


def test_the_dict_form_is_what_dataclasses_asdict_makes_and_shares_nothing(check):
    """to_dict is made without asdict's deep copy of every value (the worker makes one
    for every check it ends): the same dict, and no list or dict shared with the result."""
    from dataclasses import asdict

    result = check(
        """
        def score(input, output, expected):
            print("hello")
            return 0.5, {"feedback": "Half right: expected 'x'.", "scores": {"a": 1.0}}
        """
    )
    result.cases[0].params = {"nested": [1, 2.5, None, True, ("a", "b"), {"k": "v"}]}
    made = result.to_dict()
    assert made == asdict(result)
    assert type(made["cases"][0]["params"]["nested"][4]) is tuple
    made["cases"][0]["params"]["nested"][5]["k"] = "changed"
    made["stages"][0]["params"]["x"] = 1
    assert result.cases[0].params["nested"][5] == {"k": "v"}
    assert "x" not in result.stages[0].params
