"""contract.shapes: what a score() that broke the contract returned, and the return that
keeps it, from the node tree the child describes (real dspy and gepa objects included)."""

from __future__ import annotations

import ast
import math

import dspy
import pytest
from dspy.teleprompt.gepa.gepa_utils import ScoreWithFeedback
from gepa.adapters.default_adapter.default_adapter import EvaluationResult

from contract import shapes
from contract import values as judged
from skynet import values
from skynet.returns import check_return


def _node(value: object) -> dict:
    return values.encode(value, values.return_budget())


def _report(value: object) -> dict:
    return judged.return_report(_node(value), repr(value))


@pytest.mark.parametrize(
    ("value", "shape", "fix"),
    [
        (
            0.8,
            {"kind": "number", "type": "float", "value": "0.8"},
            'return 0.8, {"feedback": "..."}',
        ),
        (1, {"kind": "number", "type": "int", "value": "1"}, 'return 1, {"feedback": "..."}'),
        (True, {"kind": "bool", "value": "True"}, 'return 1.0, {"feedback": "..."}'),
        (
            {"score": 0.5, "feedback": "Close. Missing the date."},
            {"kind": "dict", "keys": ["score", "feedback"]},
            'return 0.5, {"feedback": "Close. Missing the date."}',
        ),
        (
            {"score": 1.0, "feedback": "OK", "scores": {"format": 1.0}},
            {"kind": "dict", "keys": ["score", "feedback", "scores"]},
            'return 1.0, {"feedback": "OK", "scores": {"format": 1.0}}',
        ),
        (
            dspy.Prediction(score=0.0, feedback="Expected 42, got 41."),
            {"kind": "dspy_prediction", "class": "Prediction", "keys": ["score", "feedback"]},
            'return 0.0, {"feedback": "Expected 42, got 41."}',
        ),
        (
            ScoreWithFeedback(score=1, feedback="Correct."),
            {
                "kind": "dspy_prediction",
                "class": "ScoreWithFeedback",
                "keys": ["score", "feedback"],
            },
            'return 1, {"feedback": "Correct."}',
        ),
        (
            EvaluationResult(score=1.0, feedback="The answer is right.", objective_scores=None),
            {"kind": "gepa_result", "count": 3},
            'return 1.0, {"feedback": "The answer is right."}',
        ),
        (
            EvaluationResult(0.5, "Half right.", {"accuracy": 0.5, "format": 1.0}),
            {"kind": "gepa_result", "count": 3},
            'return 0.5, {"feedback": "Half right.", "scores": {"accuracy": 0.5, "format": 1.0}}',
        ),
        ((0.8, "Close.", 3), {"kind": "tuple", "count": 3}, 'return 0.8, {"feedback": "Close."}'),
        ([0.8], {"kind": "list", "count": 1}, 'return 0.8, {"feedback": "..."}'),
        (None, {"kind": "none"}, 'return 0.0, {"feedback": "..."}'),
        ("0.8", {"kind": "string", "value": '"0.8"'}, 'return 0.8, {"feedback": "..."}'),
    ],
)
def test_a_value_that_is_not_a_pair_is_named_and_fixed_from_its_own_values(value, shape, fix):
    report = _report(value)
    assert report["problem"] == "not_a_pair"
    assert report["params"]["shape"] == shape
    assert report["params"]["fix"] == fix


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ((0.8, "Close."), 'return 0.8, {"feedback": "Close."}'),
        ((0.8, {}), 'return 0.8, {"feedback": "..."}'),
        (("0.8", {"feedback": "OK"}), 'return 0.8, {"feedback": "OK"}'),
        ((math.nan, {"feedback": "x"}), 'return 0.0, {"feedback": "x"}'),
        (
            (0.8, {"feedback": "OK", "scores": {"a": "0.5", "b": "high"}}),
            'return 0.8, {"feedback": "OK", "scores": {"a": 0.5}}',
        ),
    ],
)
def test_a_pair_with_a_bad_part_keeps_what_was_good(value, fix):
    report = _report(value)
    assert report["problem"] is not None
    assert report["params"]["fix"] == fix


def test_every_fix_is_one_line_of_python_that_keeps_the_contract():
    cases = [
        0.8,
        {"score": 0.25, "feedback": 'He said "no"\nthen left. ' + "x" * 500},
        dspy.Prediction(score=0.0, feedback="ünïcode ✓ हिन्दी"),
        EvaluationResult(1.0, "ok", {"x": 2}),
        (0.8, {"feedback": None}),
        object(),
    ]
    for value in cases:
        fix = _report(value)["params"]["fix"]
        assert "\n" not in fix and fix.startswith("return ")
        returned = ast.literal_eval(fix.removeprefix("return "))
        assert check_return(returned).problem is None


def test_long_feedback_is_clipped_in_the_fix_but_the_line_stays_valid():
    fix = _report({"score": 1.0, "feedback": "y" * 1000})["params"]["fix"]
    feedback = ast.literal_eval(fix.removeprefix("return "))[1]["feedback"]
    assert len(feedback) == shapes.TEXT_LIMIT and feedback.endswith("…")


def test_a_valid_return_gets_no_shape():
    report = _report((1.0, {"feedback": "Correct."}))
    assert report["problem"] is None and report["params"] == {}


def test_a_class_named_like_gepas_result_elsewhere_is_only_a_tuple():
    from typing import NamedTuple

    class EvaluationResult(NamedTuple):  # a metric's own, not gepa's
        score: float
        feedback: str
        extra: int

    assert _report(EvaluationResult(1.0, "ok", 1))["params"]["shape"] == {
        "kind": "tuple",
        "count": 3,
    }


@pytest.mark.parametrize(
    "node",
    [
        None,
        [],
        {"t": "object"},
        {"t": "object", "type": "dspy.Prediction", "attrs": {"_store": "not a dict"}},
        {"t": "dict", "items": [["k", "v"], [{"t": "str"}, None], 5]},
        {"t": "tuple", "type": "gepa.x.EvaluationResult", "items": "nope", "n": -3},
        {"t": "int", "v": "0xzz"},
        {"t": "float", "v": "nan"},
    ],
)
def test_a_forged_tree_gives_a_shape_and_never_raises(node):
    assert isinstance(shapes.describe(node), dict)
    fix = shapes.fix_line(node, "not_a_pair")
    assert fix is None or fix.startswith("return ")
