"""Where score returned: the line a return-value problem points at, and its fix."""

from __future__ import annotations

import pytest

from contract.returnline import Returns
from metrics.starters import EXACT_MATCH

BRANCHES = """\
import json


def score(input, output, expected=None):
    if output == "billing":
        return 0.8, "Close."
    try:
        if output == "other":
            return (
                0.5,
                {},
            )
    finally:
        done = True
    with open("/dev/null"):
        return 1.0, {"feedback": "Matches the expected label 'account'."}
"""


def test_each_case_points_at_the_return_that_ran(check):
    # A return inside try/finally or with: the clean-up runs after the value is made.
    result = check(BRANCHES)
    at = [(c.problem, (c.returned_at or {}).get("line")) for c in result.cases]
    assert at == [("side_info_not_dict", 6), ("feedback_missing", 9), (None, 16)]
    assert result.cases[0].returned_at["text"] == 'return 0.8, "Close."'
    assert result.failed_stage == "return_value"


def test_the_outer_call_counts_when_score_calls_itself_or_a_helper(check):
    result = check(
        """
        def helper():
            return 0.5

        def score(input, output, expected=None):
            if output == "deep":
                return 1.0, {"feedback": "x"}
            if expected is not None:
                return score(input, "deep")[0]
            return helper()
        """,
        one=True,
    )
    assert (result.cases[0].problem, result.cases[0].returned_at["line"]) == ("not_a_pair", 8)


def test_no_line_for_a_score_that_is_not_a_function_of_metric_py(check):
    result = check(
        """
        class Scorer:
            def __call__(self, input, output):
                return 0.5
        score = Scorer()
        """,
        one=True,
    )
    assert result.cases[0].problem == "not_a_pair"
    assert result.cases[0].returned_at is None


def test_a_decorated_score_is_found_by_its_first_decorator_line(check):
    result = check(
        """
        import functools

        def keep(func):
            return func

        @keep
        def score(input, output):
            return 0.5, "Close."
        """,
        one=True,
    )
    assert result.cases[0].returned_at["line"] == 8


@pytest.mark.parametrize(
    "report",
    [None, [], {"first_line": "1", "lines": [3]}, {"first_line": 1, "lines": "3"}],
)
def test_a_malformed_report_gives_no_line(report):
    assert Returns(EXACT_MATCH).line(report) is None


def test_a_reported_line_that_is_no_return_gives_no_line():
    returns = Returns(EXACT_MATCH)
    assert returns.line({"first_line": 1, "lines": [2, 3]}) is None
    assert returns.line({"first_line": 1, "lines": [2, 4, 3]}) == {
        "line": 4,
        "text": 'return 1.0, {"feedback": "Correct."}',
    }
    assert Returns("def score(:\n").line({"first_line": 1, "lines": [1]}) is None


def test_the_check_parses_metric_py_once(check, monkeypatch):
    """The returns are read from the tree the source check already parsed: parsing the
    metric again costs the worker's CPU on every check."""
    import contract.returnline

    def again(text):
        raise AssertionError("metric.py parsed a second time")

    monkeypatch.setattr(contract.returnline, "ast_parse", again)
    result = check(BRANCHES)
    at = [(c.problem, (c.returned_at or {}).get("line")) for c in result.cases]
    assert at == [("side_info_not_dict", 6), ("feedback_missing", 9), (None, 16)]


def test_returns_read_from_a_given_tree_are_those_read_from_the_text():
    import ast

    report = {"first_line": 4, "lines": [16, 15]}
    assert Returns(BRANCHES, ast.parse(BRANCHES)).line(report) == Returns(BRANCHES).line(report)
    assert Returns(BRANCHES).line(report) == {
        "line": 16,
        "text": 'return 1.0, {"feedback": "Matches the expected label \'account\'."}',
    }
