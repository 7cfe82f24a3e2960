"""skynet.reward(): weights, parts, error mode, unmeasured parts, clamping."""

from __future__ import annotations

import math

import pytest

import skynet
from skynet import _state

SPEC = {
    "weights": {"accuracy": 0.5, "speed": 0.3, "cost": 0.2},
    "speed": {"reference": 1000},
    "cost": {"reference": 0.01},
}


@pytest.fixture
def measured():
    """measured(**observation): install a case's observation in this process."""

    def install(**observation):
        _state.install(None, observation)

    yield install
    _state.install(None, None)


def test_all_parts_perfect_scores_one(measured):
    measured(duration_ms=500, cost_usd=0.005)
    value, side = skynet.reward(SPEC, 1.0, "Right.")
    assert value == pytest.approx(1.0)
    assert side == {"feedback": "Right.", "scores": {"accuracy": 1.0, "speed": 1.0, "cost": 1.0}}


def test_parts_are_reference_over_measurement(measured):
    measured(duration_ms=4000, cost_usd=0.04)
    value, side = skynet.reward(SPEC, 0.5, "Half.")
    assert side["scores"] == {"accuracy": 0.5, "speed": 0.25, "cost": 0.25}
    assert value == pytest.approx(0.5 * 0.5 + 0.3 * 0.25 + 0.2 * 0.25)


def test_weights_are_scaled_to_sum_one(measured):
    measured(duration_ms=1000, cost_usd=0.01)
    spec = {**SPEC, "weights": {"accuracy": 5, "speed": 3, "cost": 2}}
    assert skynet.reward(spec, 0.0, "x")[0] == pytest.approx(0.5)


def test_accuracy_is_clamped_without_reference(measured):
    measured(duration_ms=1, cost_usd=0)
    assert skynet.reward(SPEC, 7.0, "x")[1]["scores"]["accuracy"] == 1.0
    assert skynet.reward(SPEC, -3.0, "x")[1]["scores"]["accuracy"] == 0.0


def test_zero_measurements_score_one(measured):
    measured(duration_ms=0, cost_usd=0)
    assert skynet.reward(SPEC, 1.0, "x")[1]["scores"] == {
        "accuracy": 1.0,
        "speed": 1.0,
        "cost": 1.0,
    }


def test_accuracy_reference_turns_accuracy_into_an_error(measured):
    measured(duration_ms=1000, cost_usd=0.01)
    spec = {**SPEC, "accuracy": {"reference": 0.1}}
    assert skynet.reward(spec, 0.4, "x")[1]["scores"]["accuracy"] == pytest.approx(0.25)
    assert skynet.reward(spec, 0.05, "x")[1]["scores"]["accuracy"] == 1.0
    assert skynet.reward(spec, 0.0, "x")[1]["scores"]["accuracy"] == 1.0
    with pytest.raises(ValueError, match="accuracy_error_negative"):
        skynet.reward(spec, -0.1, "x")


def test_unmeasured_parts_score_zero_and_say_so(measured):
    measured()
    value, side = skynet.reward(SPEC, 1.0, "Right.")
    assert side["scores"] == {"accuracy": 1.0, "speed": 0.0, "cost": 0.0}
    assert value == pytest.approx(0.5)
    assert side["feedback"] == (
        "Right. [speed not measured: scored 0] [cost not measured: scored 0]"
    )


def test_unmeasured_part_with_zero_weight_gets_no_note(measured):
    measured(duration_ms=1000)
    spec = {**SPEC, "weights": {"accuracy": 1, "speed": 1, "cost": 0}}
    value, side = skynet.reward(spec, 1.0, "Right.")
    assert side["feedback"] == "Right."
    assert side["scores"]["cost"] == 0.0
    assert value == pytest.approx(1.0)


def test_value_stays_within_unit_interval_despite_rounding(measured):
    measured(duration_ms=1, cost_usd=0.0001)
    spec = {**SPEC, "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1}}
    assert skynet.reward(spec, 1.0, "x")[0] <= 1.0


def test_invalid_spec_raises_value_error_naming_the_problem(measured):
    measured(duration_ms=1, cost_usd=0)
    with pytest.raises(ValueError, match="reference_missing: cost.reference"):
        skynet.reward({"weights": SPEC["weights"], "speed": {"reference": 1}}, 1.0, "x")
    with pytest.raises(ValueError, match="spec_not_dict"):
        skynet.reward(None, 1.0, "x")


@pytest.mark.parametrize("accuracy", ["1", None, math.nan, True])
def test_bad_accuracy_raises_value_error(measured, accuracy):
    measured(duration_ms=1, cost_usd=0)
    with pytest.raises(ValueError):
        skynet.reward(SPEC, accuracy, "x")


def test_non_string_feedback_raises_type_error(measured):
    measured(duration_ms=1, cost_usd=0)
    with pytest.raises(TypeError):
        skynet.reward(SPEC, 1.0, None)


def test_observation_is_read_only_and_complete(measured):
    measured(duration_ms=12, cost_usd=0.5, unknown=1, input_tokens=-3)
    obs = skynet.observation()
    assert dict(obs) == {
        "duration_ms": 12,
        "cost_usd": 0.5,
        "model_calls": None,
        "input_tokens": None,
        "output_tokens": None,
    }
    with pytest.raises(TypeError):
        obs["cost_usd"] = 0  # type: ignore[index]
    assert skynet.service_cost() == 0.5


def test_llm_outside_a_check_raises_model_error():
    with pytest.raises(skynet.ModelError) as info:
        skynet.llm("hello")
    assert info.value.code == "no_channel"
