"""The minibatch gate: how often GEPA's comparison of a candidate and its proposal on one
minibatch makes the right call when the metric is noisy, against values worked out by
hand and against a simulation of the comparison itself."""

from __future__ import annotations

import numpy as np
import pytest

from providers import projection
from providers.projection import minibatch_gate, plan, right_call, score_step


def test_the_thresholds_are_the_documented_ones():
    assert projection.COIN_TOSS == 0.75
    assert projection.RIGHT_CALL_TARGET == 0.9
    assert projection.STEP_SHARE == 0.1
    assert projection.MINIBATCH_LIMITS == (1, 50)


def test_a_noisy_judge_at_the_default_minibatch_is_a_coin_toss():
    # σ² = 0.06, m = 3: the difference of the two means has SD sqrt(2 * 0.06 / 3) = 0.2,
    # so a step of 0.1 is half an SD: P = Φ(0.5) = 0.691462.
    # For P ≥ 0.9: 0.1 / sqrt(0.12 / m) ≥ 1.281552, m ≥ 0.12 * 12.81552² = 19.709, so 20
    # (at 19: Φ(1.258306) = 0.895859; at 20: Φ(1.290994) = 0.901647).
    gate = minibatch_gate(0.06, 3)
    assert gate["right_call"] == pytest.approx(0.691462, abs=1e-6)
    assert gate["coin_toss"] is True
    assert gate["minibatch_for"] == 20
    assert right_call(0.06, 19, 0.1) == pytest.approx(0.895859, abs=1e-6)
    assert right_call(0.06, 20, 0.1) == pytest.approx(0.901647, abs=1e-6)


def test_a_quieter_judge_is_no_coin_toss():
    # σ² = 0.015, m = 3: SD sqrt(0.01) = 0.1, P = Φ(1) = 0.841345; m ≥ 0.03 * 164.237 =
    # 4.93, so 5 reaches 0.9 (Φ(0.1 / sqrt(0.006)) = Φ(1.290994) = 0.901647).
    gate = minibatch_gate(0.015, 3)
    assert gate == {
        "right_call": pytest.approx(0.841345, abs=1e-6),
        "coin_toss": False,
        "minibatch_for": 5,
    }


def test_the_step_scales_with_the_scores_range():
    # A 0-to-10 metric: the step is 1; σ² = 6 is then the σ² = 0.06 above, scaled by 10².
    assert score_step({"min": 0.0, "max": 10.0}) == pytest.approx(1.0)
    gate = minibatch_gate(6.0, 3, step=1.0)
    assert gate["right_call"] == pytest.approx(0.691462, abs=1e-6)
    assert gate["minibatch_for"] == 20
    # A range of 1 or less, or none known, counts as 1.
    assert score_step({"min": 0.2, "max": 0.9}) == pytest.approx(0.1)
    assert score_step({"min": None, "max": None}) == pytest.approx(0.1)
    assert score_step(None) == pytest.approx(0.1)


def test_no_size_up_to_50_is_enough_for_a_very_noisy_judge():
    # σ² = 1: even at m = 50, P = Φ(0.1 / sqrt(2 / 50)) = Φ(0.5) = 0.691462.
    gate = minibatch_gate(1.0, 3)
    assert gate["minibatch_for"] is None and gate["coin_toss"] is True
    assert right_call(1.0, 50, 0.1) == pytest.approx(0.691462, abs=1e-6)


def test_a_metric_without_noise_always_makes_the_right_call():
    assert minibatch_gate(0.0, 3) == {"right_call": 1.0, "coin_toss": False, "minibatch_for": 1}


def test_a_minibatch_has_at_least_one_case():
    with pytest.raises(ValueError):
        minibatch_gate(0.1, 0)


def simulated_share(variance: float, minibatch: int, step: float, trials: int, seed: int):
    """The share of comparisons a candidate truly better by `step` on every case wins,
    each of the two candidates' scores on each case drawn with the judge's noise, and
    gepa's rule: the proposal is kept when its minibatch sum is higher."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(0.2, 0.8, size=(trials, minibatch))  # the parent's true scores
    sd = np.sqrt(variance)
    parent = true + rng.normal(0.0, sd, size=true.shape)
    child = true + step + rng.normal(0.0, sd, size=true.shape)
    return float(np.mean(child.sum(axis=1) > parent.sum(axis=1)))


@pytest.mark.parametrize(
    "variance, minibatch, step",
    [(0.06, 3, 0.1), (0.015, 3, 0.1), (0.036, 12, 0.1), (0.2, 1, 0.1), (4.0, 8, 1.0)],
)
def test_the_formula_matches_a_simulation_of_the_comparison(variance, minibatch, step):
    share = simulated_share(variance, minibatch, step, trials=40_000, seed=7)
    assert right_call(variance, minibatch, step) == pytest.approx(share, abs=0.03)


def test_the_projection_plans_with_the_runs_minibatch():
    # Budget 320, valset 20, minibatch 5: 300 calls left after the seed's scoring.
    # Every proposal accepted: 5 + 5 + 20 = 30 an iteration, 300 / 30 = 10 iterations.
    # None accepted: 5 + 5 = 10 an iteration, 30 iterations, 320 calls.
    calls, iterations = plan(320, 20, 5)
    assert (calls.low, calls.high) == (320, 320)
    assert (iterations.low, iterations.high) == (10, 30)


def test_a_projection_at_another_minibatch_plans_and_sizes_its_prompt_by_it():
    from tests.providers.test_projection import _project

    result = _project(minibatch=5)
    assert result.minibatch == 5 and result.assumptions["reflection_minibatch"] == 5
    assert (result.iterations.low, result.iterations.high) == (10, 30)
    # The low prompt: (1000 + 200 + 5 * (300 + 100 + 80)) / 4 = 3600 / 4 = 900 tokens.
    assert result.prompt_tokens.low == pytest.approx(900)
