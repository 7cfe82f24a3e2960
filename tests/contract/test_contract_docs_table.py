"""The docs' table of return values, each row through the real runner, and the
docs' two examples passing on the built-in cases."""

from __future__ import annotations

import pytest

ROWS = [
    ('(0.8, {"feedback": "Close. Missing the date."})', None),
    ('[1.0, {"feedback": "OK", "scores": {"format": 1.0}}]', None),
    ("0.8", "not_a_pair"),
    ('(0.8, "Close.")', "side_info_not_dict"),
    ("(0.8, {})", "feedback_missing"),
    ('("0.8", {"feedback": "OK"})', "score_not_number"),
    ('(0.8, {"feedback": "OK", "scores": {"a": "high"}})', "named_score_not_number"),
    (
        '(0.5, {"feedback": "Label wrong.", "predictor_feedback": '
        '{"classify.predict": "Answer with the label alone."}})',
        None,
    ),
    ('(0.5, {"feedback": "OK", "predictor_feedback": "Be brief."})', "predictor_feedback_not_dict"),
    (
        '(0.5, {"feedback": "OK", "predictor_feedback": {"classify.predict": ""}})',
        "predictor_feedback_empty",
    ),
]


@pytest.mark.parametrize(("value", "problem"), ROWS)
def test_docs_table_row_through_the_runner(check, value, problem):
    result = check(f"def score(input, output):\n    return {value}\n", one=True)
    case = result.cases[0]
    assert case.problem == problem
    if problem is None:
        assert result.passed and case.status == "valid"
    else:
        assert case.status == "invalid"
        assert (result.passed, result.failed_stage) == (False, "return_value")
        assert result.stage("return_value").problem == "cases_invalid"


def test_docs_exact_match_example_passes(check):
    result = check(
        """
        def score(input, output, expected):
            if output == expected["label"]:
                return 1.0, {"feedback": "Correct label."}
            return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
        """
    )
    assert result.passed is True
    assert [c.score for c in result.cases] == [1.0, 0.0, 1.0]
    assert all(c.call_args == 3 for c in result.cases)


def test_docs_accuracy_speed_and_cost_example_passes(check):
    result = check(
        """
        import skynet

        REWARD_SPEC = {
            "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
            "speed": {"reference": 2000},
            "cost": {"reference": 0.001},
        }

        def score(input, output, expected):
            right = output == expected["label"]
            feedback = "Correct." if right else f"Expected {expected['label']!r}, got {output!r}."
            return skynet.reward(REWARD_SPEC, 1.0 if right else 0.0, feedback)
        """
    )
    assert result.passed is True
    assert result.stage("reward_spec").status == "passed"
    assert all(0 <= c.score <= 1 for c in result.cases)
    assert set(result.cases[1].scores) == {"accuracy", "speed", "cost"}
    assert not [h for h in result.hints if h.code == "score_out_of_range"]
