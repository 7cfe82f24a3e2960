"""skynet.rewardspec: REWARD_SPEC validation, reporting every problem with a path."""

from __future__ import annotations

import math

import pytest

from skynet import rewardspec

VALID = {
    "weights": {"accuracy": 0.6, "speed": 0.3, "cost": 0.1},
    "speed": {"reference": 2000},
    "cost": {"reference": 0.01},
}


def codes(spec):
    return [(p["code"], p["params"]["path"]) for p in rewardspec.validate(spec)]


def test_valid_spec_has_no_problems_and_parses_to_unit_weights():
    assert rewardspec.validate(VALID) == []
    parsed = rewardspec.parse(VALID)
    assert math.isclose(sum(parsed.weights.values()), 1.0)
    assert parsed.speed_reference == 2000.0 and parsed.accuracy_reference is None


def test_weights_are_scaled_to_sum_one():
    spec = {**VALID, "weights": {"accuracy": 2, "speed": 1, "cost": 1}}
    assert rewardspec.parse(spec).weights == {"accuracy": 0.5, "speed": 0.25, "cost": 0.25}


def test_optional_accuracy_reference_is_read():
    spec = {**VALID, "accuracy": {"reference": 0.1}}
    assert rewardspec.parse(spec).accuracy_reference == 0.1


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ([1, 2], [("spec_not_dict", "")]),
        ({"speed": {"reference": 1}, "cost": {"reference": 1}}, [("weights_missing", "weights")]),
        ({**VALID, "weights": [1, 1, 1]}, [("section_not_dict", "weights")]),
        ({**VALID, "speed": 2000}, [("section_not_dict", "speed")]),
        ({**VALID, "weights": {"accuracy": 1, "speed": 0}}, [("weight_missing", "weights.cost")]),
        (
            {**VALID, "weights": {"accuracy": 1, "speed": 0, "cost": 0, "latency": 1}},
            [("weight_unknown", "weights.latency")],
        ),
        (
            {**VALID, "weights": {"accuracy": "1", "speed": 0, "cost": 0}},
            [("weight_not_number", "weights.accuracy")],
        ),
        (
            {**VALID, "weights": {"accuracy": True, "speed": 0, "cost": 0}},
            [("weight_not_number", "weights.accuracy")],
        ),
        (
            {**VALID, "weights": {"accuracy": math.inf, "speed": 0, "cost": 0}},
            [("weight_not_finite", "weights.accuracy")],
        ),
        (
            {**VALID, "weights": {"accuracy": 1, "speed": -0.5, "cost": 0}},
            [("weight_negative", "weights.speed")],
        ),
        (
            {**VALID, "weights": {"accuracy": 0, "speed": 0, "cost": 0}},
            [("weights_all_zero", "weights")],
        ),
        ({**VALID, "speed": {}}, [("reference_missing", "speed.reference")]),
        (
            {"weights": VALID["weights"], "speed": {"reference": 1}},
            [("reference_missing", "cost.reference")],
        ),
        ({**VALID, "cost": {"reference": "1"}}, [("reference_not_number", "cost.reference")]),
        ({**VALID, "cost": {"reference": math.nan}}, [("reference_not_finite", "cost.reference")]),
        ({**VALID, "speed": {"reference": 0}}, [("reference_not_positive", "speed.reference")]),
        (
            {**VALID, "accuracy": {"reference": -1}},
            [("reference_not_positive", "accuracy.reference")],
        ),
    ],
)
def test_each_problem_code_with_its_path(spec, expected):
    assert codes(spec) == expected


def test_every_problem_is_reported_not_just_the_first():
    spec = {"weights": {"accuracy": -1, "speed": "x"}, "speed": {"reference": 0}}
    assert codes(spec) == [
        ("weight_negative", "weights.accuracy"),
        ("weight_not_number", "weights.speed"),
        ("weight_missing", "weights.cost"),
        ("reference_not_positive", "speed.reference"),
        ("reference_missing", "cost.reference"),
    ]


def test_problem_params_are_json_safe_values():
    problems = rewardspec.validate(
        {**VALID, "weights": {"accuracy": math.nan, "speed": -2, "cost": []}}
    )
    assert [p["params"] for p in problems] == [
        {"path": "weights.accuracy", "value": "nan"},
        {"path": "weights.speed", "value": -2.0},
        {"path": "weights.cost", "type": "list"},
    ]


def test_every_code_is_declared():
    spec = {"weights": {"accuracy": -1, "speed": "x", "z": 1}, "speed": 1, "cost": {"reference": 0}}
    assert {p["code"] for p in rewardspec.validate(spec)} <= set(rewardspec.CODES)


def test_parse_raises_value_error_naming_the_problem():
    with pytest.raises(ValueError, match="weight_negative: weights.speed"):
        rewardspec.parse({**VALID, "weights": {"accuracy": 1, "speed": -1, "cost": 0}})
