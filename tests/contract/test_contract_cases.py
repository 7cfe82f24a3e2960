"""contract.cases: built-in cases and the JSONL cases file."""

from __future__ import annotations

import json

import pytest

from contract.cases import DEFAULT_CASES, Case, CasesError, parse_cases_jsonl


def jsonl(*objs):
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


LINE = {"input": {"q": "x"}, "output": "billing", "expected": {"label": "billing"}}


def test_three_built_in_cases_one_wrong():
    assert len(DEFAULT_CASES) == 3
    right = [c.output == c.expected["label"] for c in DEFAULT_CASES]
    assert right == [True, False, True]


def test_parses_three_lines_skipping_blank_ones():
    text = jsonl(LINE, "", {"input": {}, "output": None}, {**LINE, "observation": {"cost_usd": 1}})
    cases = parse_cases_jsonl(text)
    assert cases[0] == Case({"q": "x"}, "billing", {"label": "billing"}, None)
    assert cases[1].output is None and cases[1].expected is None
    assert cases[2].measured()["cost_usd"] == 1
    assert cases[2].measured()["duration_ms"] is None


def test_accepts_bytes_with_bom_and_ignores_unknown_keys():
    text = "\ufeff" + jsonl({**LINE, "id": 7}, LINE, LINE)
    assert len(parse_cases_jsonl(text.encode())) == 3


@pytest.mark.parametrize(
    ("lines", "code", "line", "params"),
    [
        (["{oops", LINE, LINE], "bad_json", 1, {"column": 2}),
        ([LINE, '{"input": {}, "output": NaN}', LINE], "bad_json", 2, {"column": None}),
        ([LINE, LINE, "[1]"], "not_object", 3, {}),
        ([{"output": 1}, LINE, LINE], "input_missing", 1, {}),
        ([{"input": [], "output": 1}, LINE, LINE], "input_not_object", 1, {}),
        ([{"input": {}}, LINE, LINE], "output_missing", 1, {}),
        ([{**LINE, "expected": "billing"}, LINE, LINE], "expected_not_object", 1, {}),
        ([{**LINE, "observation": 3}, LINE, LINE], "observation_not_object", 1, {}),
        (
            [{**LINE, "observation": {"cost_usd": "1"}}, LINE, LINE],
            "observation_value_not_number",
            1,
            {"key": "cost_usd"},
        ),
        ([LINE, LINE], "wrong_count", None, {"count": 2, "expected": 3}),
        ([LINE] * 4, "wrong_count", None, {"count": 4, "expected": 3}),
    ],
)
def test_each_error_code(lines, code, line, params):
    with pytest.raises(CasesError) as info:
        parse_cases_jsonl(jsonl(*lines))
    assert (info.value.code, info.value.line, info.value.params) == (code, line, params)


def test_too_large_and_not_utf8():
    with pytest.raises(CasesError) as info:
        parse_cases_jsonl(b" " * (2 << 20))
    assert info.value.code == "cases_too_large"
    with pytest.raises(CasesError) as info:
        parse_cases_jsonl(b"\xff\xfe")
    assert info.value.code == "bad_json"


def test_line_separator_inside_a_string_is_not_a_line_break():
    text = jsonl({**LINE, "output": "a\u2028b"}, LINE, LINE)
    assert parse_cases_jsonl(text)[0].output == "a\u2028b"
