"""A side info's "predictor_feedback" through the real check: kept on the case row when
valid, and each way of breaking it fails the return_value stage with its own problem."""

from __future__ import annotations

import pytest

VALID = """
def score(input, output, expected):
    return 0.0, {
        "feedback": "Expected the label bug.",
        "predictor_feedback": {
            "classify.predict": "Name the label only.",
            "explain": "Say which words of the input point to a bug.",
        },
    }
"""


def test_a_valid_predictor_feedback_passes_and_is_on_the_case_row(check):
    result = check(VALID, one=True)
    assert result.passed is True
    case = result.cases[0]
    assert case.status == "valid" and case.feedback == "Expected the label bug."
    assert case.predictor_feedback == {
        "classify.predict": "Name the label only.",
        "explain": "Say which words of the input point to a bug.",
    }
    assert case.predictor_feedback_omitted == 0
    # The stored form keeps it too.
    stored = result.to_dict()["cases"][0]
    assert stored["predictor_feedback"]["explain"].startswith("Say which words")


def test_a_case_without_predictor_feedback_has_none(check):
    result = check(
        'def score(input, output):\n    return 1.0, {"feedback": "Matches bug."}\n', one=True
    )
    assert result.passed and result.cases[0].predictor_feedback == {}


@pytest.mark.parametrize(
    ("side_info", "problem", "params"),
    [
        (
            "{'feedback': 'x', 'predictor_feedback': ['a']}",
            "predictor_feedback_not_dict",
            {"type": "list"},
        ),
        (
            "{'feedback': 'x', 'predictor_feedback': 'a'}",
            "predictor_feedback_not_dict",
            {"type": "str"},
        ),
        (
            "{'feedback': 'x', 'predictor_feedback': {3: 'Say why.'}}",
            "predictor_name_not_string",
            {"name": "3"},
        ),
        (
            "{'feedback': 'x', 'predictor_feedback': {'first': b'Say why.'}}",
            "predictor_feedback_not_string",
            {"name": "first", "type": "bytes"},
        ),
        (
            "{'feedback': 'x', 'predictor_feedback': {'first': 'Say why.', 'second': '  '}}",
            "predictor_feedback_empty",
            {"name": "second"},
        ),
    ],
)
def test_each_invalid_predictor_feedback_fails_the_return_value_stage(
    check, side_info, problem, params
):
    result = check(f"def score(input, output):\n    return 1.0, {side_info}\n", one=True)
    case = result.cases[0]
    own = {key: item for key, item in case.params.items() if key not in ("shape", "fix")}
    assert (case.status, case.problem, own) == ("invalid", problem, params)
    assert (result.passed, result.failed_stage) == (False, "return_value")
    assert result.stage("return_value").problem == "cases_invalid"
    assert case.predictor_feedback == {}
    # The return that keeps the contract, built from the case's own values.
    assert case.params["fix"].startswith('return 1.0, {"feedback": "x"')


def test_the_hints_read_each_predictors_feedback_too():
    from contract.engine import run_check

    source = (
        "def score(input, output, expected=None):\n"
        "    label = expected['label']\n"
        "    return float(output == label), {\n"
        "        'feedback': '',\n"
        "        'predictor_feedback': {\n"
        "            'classify.predict': f'Expected {label!r}, got {output!r}: name the label.',\n"
        "        },\n"
        "    }\n"
    )
    result = run_check(source, timeout_s=10)
    assert result.passed is True
    # The general feedback is empty, but each predictor's reflection reads its own text:
    # no case is told its feedback is empty, and each earns the note for specific feedback.
    codes = [hint.code for hint in result.hints]
    assert "feedback_empty" not in codes
    assert codes.count("feedback_specific") == 3
