"""contract.noise: a judge's own noise from K scorings of each case, each figure checked
against numpy written out on fixed data, and its intervals against plain resampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from contract import noise

NAN = math.nan
VALID, ERROR = 0, 2

# Six cases scored three times: steady, a 0/1 flip, a drift, a status flip with one
# valid score left, a case valid nowhere, and a steady case at another score.
STATUSES = np.array(
    [
        [VALID, VALID, VALID],
        [VALID, VALID, VALID],
        [VALID, VALID, VALID],
        [VALID, ERROR, ERROR],
        [ERROR, ERROR, ERROR],
        [VALID, VALID, VALID],
    ]
)
SCORES = np.array(
    [
        [1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0],
        [0.2, 0.5, 0.8],
        [0.7, NAN, NAN],
        [NAN, NAN, NAN],
        [0.4, 0.4, 0.4],
    ]
)
INDEXES = np.array([10, 11, 12, 13, 14, 15])


def test_a_case_flips_when_its_status_or_score_changes_and_never_when_steady():
    assert noise.flipped(STATUSES, SCORES).tolist() == [False, True, True, True, False, False]
    # A difference below SAME_SCORE is the same score; a valid score against none is not.
    assert noise.flipped(np.zeros((1, 2)), np.array([[0.5, 0.5 + 1e-12]])).tolist() == [False]
    assert noise.flipped(np.zeros((1, 2)), np.array([[0.5, NAN]])).tolist() == [True]


def test_the_figures_are_numpys_own_on_the_rows_that_have_them():
    found = noise.noise(STATUSES, SCORES, INDEXES)
    assert found["k"] == 3 and found["n"] == 6
    assert found["flip_share"]["value"] == pytest.approx(3 / 6)
    # Variance (ddof=1) over the cases with two valid scores or more: 0, 1, 2, 5.
    rows = [SCORES[i] for i in (0, 1, 2, 5)]
    variances = [np.var(row, ddof=1) for row in rows]
    assert found["variance"] == pytest.approx(np.mean(variances))
    assert found["spread_mean"] == pytest.approx(np.mean(np.sqrt(variances)))
    # The mean of each case's mean of its valid scores; the case valid nowhere has none.
    per_case = [np.mean(SCORES[i][~np.isnan(SCORES[i])]) for i in (0, 1, 2, 3, 5)]
    assert found["mean"]["value"] == pytest.approx(np.mean(per_case))
    assert found["mean"]["low"] <= found["mean"]["value"] <= found["mean"]["high"]


def test_the_examples_are_the_changed_cases_the_largest_spread_first():
    found = noise.noise(STATUSES, SCORES, INDEXES)
    # Case 13 changed status and has one valid score (no spread): first. Then 11 (std
    # 0.577) before 12 (0.3). Steady cases are never examples.
    assert found["examples"] == [13, 11, 12]
    assert noise.noise(STATUSES, SCORES, INDEXES, examples=1)["examples"] == [13]


def test_the_case_by_case_resamples_are_plain_numpy_resampling():
    values = np.random.default_rng(7).normal(size=500)
    reference = values[np.random.default_rng(3).integers(0, 500, (1000, 500))].mean(axis=1)
    drawn = noise.resampled_means(values, resamples=1000, seed=3, grouped=False)
    assert np.array_equal(drawn, reference)


def test_batches_of_resamples_are_the_same_draws_as_one(monkeypatch):
    values = np.random.default_rng(8).normal(size=300)
    whole = noise.resampled_means(values, resamples=50, seed=1, grouped=False)
    monkeypatch.setattr(noise, "CELLS", 300 * 7)  # seven resamples a batch, and a rest
    assert np.array_equal(noise.resampled_means(values, resamples=50, seed=1, grouped=False), whole)


def test_counts_per_value_resample_as_drawing_cases_does():
    # A judge's 0/1 scores: drawn as counts per value or case by case, the resampled
    # means have the same distribution (their spread agrees to a few percent).
    values = (np.random.default_rng(5).random(2000) < 0.3).astype(float)
    grouped = noise.resampled_means(values, resamples=4000, seed=11, grouped=True)
    one_by_one = noise.resampled_means(values, resamples=4000, seed=12, grouped=False)
    assert grouped.mean() == pytest.approx(values.mean(), abs=0.002)
    assert grouped.std() == pytest.approx(one_by_one.std(), rel=0.06)
    expected_sd = math.sqrt(values.mean() * (1 - values.mean()) / len(values))
    assert grouped.std() == pytest.approx(expected_sd, rel=0.06)


def test_the_interval_is_the_percentiles_of_the_resampled_means():
    values = np.random.default_rng(9).normal(loc=0.5, size=200)
    means = noise.resampled_means(values, resamples=1000, seed=4)
    low, high = np.quantile(means, [0.025, 0.975])
    found = noise.mean_interval(values, resamples=1000, seed=4)
    assert found == {"value": pytest.approx(values.mean()), "low": low, "high": high}
    narrower = noise.mean_interval(values, resamples=1000, seed=4, level=0.5)
    assert found["low"] < narrower["low"] < narrower["high"] < found["high"]


def test_a_seed_gives_the_same_interval_every_time():
    first = noise.noise(STATUSES, SCORES, INDEXES, seed=2)
    assert noise.noise(STATUSES, SCORES, INDEXES, seed=2) == first


def test_the_interval_covers_a_known_flip_rate_about_95_times_in_100():
    # Judges that pass each case with p = 0.5, scored K = 3 times: a case flips with
    # 1 - p**3 - (1 - p)**3 = 0.75. Of 200 evaluations of 60 cases, the interval should
    # hold 0.75 some 95% of the time; a percentile bootstrap on 60 cases runs a little
    # short, and 200 trials wobble by ±3 points, hence the bounds.
    rng = np.random.default_rng(2024)
    held = 0
    for trial in range(200):
        scores = (rng.random((60, 3)) < 0.5).astype(float)
        found = noise.noise(np.zeros((60, 3)), scores, seed=trial)
        held += found["flip_share"]["low"] <= 0.75 <= found["flip_share"]["high"]
    assert 175 <= held <= 200


def test_nothing_to_measure_is_said_as_none():
    found = noise.noise(np.zeros((0, 3)), np.zeros((0, 3)))
    assert found["n"] == 0 and found["k"] == 3
    assert found["flip_share"] == {"value": None, "low": None, "high": None}
    assert found["mean"] == {"value": None, "low": None, "high": None}
    assert found["variance"] is None and found["spread_mean"] is None and found["examples"] == []
    # Every case failed every time: flips are measured, scores are not.
    failed = noise.noise(np.full((4, 2), ERROR), np.full((4, 2), NAN))
    assert failed["flip_share"]["value"] == 0.0 and failed["mean"]["value"] is None


def test_two_hundred_thousand_cases_are_measured_in_bounded_memory():
    # The summary's worst case: continuous scores (drawn case by case, CELLS at a time).
    rng = np.random.default_rng(1)
    scores = rng.random((200_000, 2))
    found = noise.noise(np.zeros((200_000, 2)), scores, resamples=20)
    assert found["n"] == 200_000 and found["flip_share"]["value"] == 1.0
    assert found["mean"]["low"] < 0.5 < found["mean"]["high"]


def test_scorings_added_case_by_case_are_the_arrays_measured_whole():
    scorings = noise.Scorings(k=3, capacity=8)
    names = {VALID: "valid", ERROR: "error"}
    for index, (codes, scores) in zip(INDEXES, zip(STATUSES, SCORES, strict=True), strict=True):
        verdicts = [
            (names[code], None if math.isnan(score) else score)
            for code, score in zip(codes, scores, strict=True)
        ]
        scorings.add(int(index), verdicts)
    scorings.add(99, [("valid", 1.0)])  # scored once: its first scoring failed
    scorings.add(98, [("error", 0.3), ("valid", True), ("valid", math.inf)])  # no valid score
    assert scorings.n == 7
    found = scorings.noise()
    whole = noise.noise(
        np.vstack([STATUSES, [[ERROR, VALID, VALID]]]),
        np.vstack([SCORES, [[NAN, NAN, NAN]]]),
        np.append(INDEXES, 98),
    )
    assert found == whole
    assert found["n"] == 7 and 98 in found["examples"]
