"""Does the metric agree with people (contract.agreement): every figure against scipy and
scikit-learn on fixed data, the vectorized resamples against the same libraries on the
same resampled rows, the intervals' coverage on data whose true agreement is known, and
the edge cases that must give None rather than an exception."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as sk

from contract import agreement, bootstrap

CLASSES = ["bad", "ok", "good"]
HUMAN_LABELS = (
    "bad ok good good ok bad bad good ok ok good bad good ok bad good good ok bad ok "
    "good good bad ok ok bad good ok good bad"
).split()
METRIC_LABELS = (
    "bad ok good ok ok ok bad good bad ok good bad good good bad ok good ok bad bad "
    "good ok bad ok good bad good ok good ok"
).split()
HUMAN_SCORES = [1, 2, 5, 4, 3, 1, 2, 5, 3, 3, 4, 1, 5, 4, 2, 4, 5, 3, 1, 2, 4, 5, 2, 3, 3]
METRIC_SCORES = [
    0.05, 0.3, 0.92, 0.7, 0.55, 0.2, 0.35, 0.81, 0.4, 0.55, 0.62, 0.1, 1.0, 0.9, 0.25,
    0.7, 0.88, 0.47, 0.05, 0.5, 0.66, 0.97, 0.18, 0.44, 0.61,
]  # fmt: skip


def resampled_rows(n: int, resamples: int, seed: int) -> list[np.ndarray]:
    """The rows of each resample the bootstrap draws, one array of row indices each."""
    rows = np.arange(n)
    return [
        np.repeat(rows, counts)
        for weights in bootstrap.resample_weights(n, resamples, seed)
        for counts in weights
    ]


def percentile(values: list[float], level: float = 0.95) -> tuple[float, float]:
    defined = np.array([v for v in values if not math.isnan(v)])
    tail = (1 - level) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


def plain_json(result: dict) -> None:
    """Results are stored as JSON: plain types only, no nan."""
    assert json.loads(json.dumps(result, allow_nan=False)) == result


# Point figures against the libraries -----------------------------------------------------


def test_label_figures_are_sklearns():
    result = agreement.label_agreement(HUMAN_LABELS, METRIC_LABELS, CLASSES, resamples=200)

    assert result["n"] == 30
    assert (
        result["confusion"]
        == sk.confusion_matrix(HUMAN_LABELS, METRIC_LABELS, labels=CLASSES).tolist()
    )
    assert result["accuracy"]["value"] == pytest.approx(
        sk.accuracy_score(HUMAN_LABELS, METRIC_LABELS)
    )
    assert result["kappa"]["value"] == pytest.approx(
        sk.cohen_kappa_score(HUMAN_LABELS, METRIC_LABELS, labels=CLASSES)
    )
    precision, recall, _, support = sk.precision_recall_fscore_support(
        HUMAN_LABELS, METRIC_LABELS, labels=CLASSES, zero_division=np.nan
    )
    assert [c["class"] for c in result["per_class"]] == CLASSES
    for i, item in enumerate(result["per_class"]):
        assert item["support"] == support[i]
        assert item["precision"]["value"] == pytest.approx(precision[i])
        assert item["recall"]["value"] == pytest.approx(recall[i])
    plain_json(result)


def test_score_figures_are_scipys_and_the_mean_absolute_difference_numpys():
    result = agreement.score_agreement(HUMAN_SCORES, METRIC_SCORES, scale=(1, 5), resamples=200)

    h, m = np.array(HUMAN_SCORES, dtype=float), np.array(METRIC_SCORES)
    assert result["n"] == 25
    assert result["spearman"]["value"] == pytest.approx(stats.spearmanr(h, m).statistic)
    assert result["kendall"]["value"] == pytest.approx(stats.kendalltau(h, m).statistic)
    assert result["mad"]["value"] == pytest.approx(np.mean(np.abs((h - 1) / 4 - m)))
    plain_json(result)


def test_calibration_bins_the_metric_and_averages_the_human_score():
    result = agreement.score_agreement(
        [1, 2, 3, 4, 5, 5, 2], [-0.5, 0.1, 0.3, 0.3, 0.999, 1.7, 0.29], scale=(1, 5), bins=10
    )

    bins = result["calibration"]
    assert [(b["lo"], b["hi"]) for b in bins][:4] == [(0, 0.1), (0.1, 0.2), (0.2, 0.3), (0.3, 0.4)]
    assert bins[-1]["hi"] == 1.0
    by_bin = {i: (b["count"], b["human_mean"]) for i, b in enumerate(bins) if b["count"]}
    # -0.5 clipped into the first bin, 0.3 on an edge into the higher bin, 1.7 into the last.
    assert by_bin == {0: (1, 1.0), 1: (1, 2.0), 2: (1, 2.0), 3: (2, 3.5), 9: (2, 5.0)}
    assert all(b["human_mean"] is None for b in bins if not b["count"])


def test_weighted_kappa_between_two_people_is_sklearns_over_the_whole_scale():
    first = [1, 2, 2, 4, 5, None, 5, 4, 1, 2, 4, 5]
    second = [1, 2, 4, 4, 4, 3, 5, 5, 2, None, 4, 4]

    result = agreement.kappa_between(first, second, resamples=200)

    both = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    a, b = [x for x, _ in both], [y for _, y in both]
    assert result["n"] == 10
    # No one said 3: the scale still runs 1..5, so 2 against 4 is two steps apart.
    assert result["labels"] == [1, 2, 3, 4, 5]
    assert result["kappa"]["value"] == pytest.approx(
        sk.cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5])
    )
    assert result["weighted_kappa"]["value"] == pytest.approx(
        sk.cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic")
    )
    assert result["agreement"]["value"] == pytest.approx(np.mean(np.array(a) == np.array(b)))
    plain_json(result)


def test_kappa_between_text_labels_has_no_weighted_kappa():
    result = agreement.kappa_between(
        ["pass", "fail", "pass", "pass"], ["pass", "pass", "pass", "fail"]
    )

    assert "weighted_kappa" not in result
    assert result["kappa"]["value"] == pytest.approx(
        sk.cohen_kappa_score(["pass", "fail", "pass", "pass"], ["pass", "pass", "pass", "fail"])
    )


def test_kappa_between_reads_numbers_written_as_text_as_one_scale():
    result = agreement.kappa_between(["1", "2.0", 3, "3"], [1.0, "2", "3", 2])

    assert result["labels"] == [1, 2, 3]
    assert result["agreement"]["value"] == pytest.approx(0.75)
    assert "weighted_kappa" in result


# The vectorized resamples are the libraries' statistics on the resampled rows ---------------


def test_resamples_draw_n_rows_with_replacement_the_same_for_the_same_seed():
    chunks = list(bootstrap.resample_weights(7, 1000, seed=3))
    again = list(bootstrap.resample_weights(7, 1000, seed=3))
    other = list(bootstrap.resample_weights(7, 1000, seed=4))

    weights = np.concatenate(chunks)
    assert weights.shape == (1000, 7)
    assert (weights.sum(axis=1) == 7).all()
    assert (weights >= 0).all() and (weights.max(axis=1) > 1).any()  # with replacement
    assert np.array_equal(weights, np.concatenate(again))
    assert not np.array_equal(weights, np.concatenate(other))


@pytest.mark.parametrize("k", [3, 40])  # 40: past JOINT_CELLS, three tallies, no table
def test_resampled_label_statistics_are_sklearns(k):
    rng = np.random.default_rng(k)
    n = 80
    human = rng.integers(0, k, n)
    metric = np.where(rng.random(n) < 0.6, human, rng.integers(0, k, n))
    pairs = bootstrap.LabelPairs(human, metric, k)
    weights = next(bootstrap.resample_weights(n, 6, seed=11))[:6]

    hits, by_human, by_metric = pairs.counts(weights)
    kappas = bootstrap.kappa(hits, by_human, by_metric)
    accuracies = bootstrap.accuracy(hits, n)
    quadratic = bootstrap.quadratic_kappa(weights, pairs, by_human, by_metric)
    precision, recall = bootstrap.precision_recall(hits, by_human, by_metric)

    labels = list(range(k))
    for b, counts in enumerate(weights):
        rows = np.repeat(np.arange(n), counts)
        h, m = human[rows], metric[rows]
        assert kappas[b] == pytest.approx(sk.cohen_kappa_score(h, m, labels=labels))
        assert accuracies[b] == pytest.approx(sk.accuracy_score(h, m))
        assert quadratic[b] == pytest.approx(
            sk.cohen_kappa_score(h, m, labels=labels, weights="quadratic")
        )
        p, r, _, _ = sk.precision_recall_fscore_support(h, m, labels=labels, zero_division=np.nan)
        np.testing.assert_allclose(precision[b], p, equal_nan=True)
        np.testing.assert_allclose(recall[b], r, equal_nan=True)


def _scores(kind: str, rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    metric = rng.random(n)
    human = np.clip(np.round(1 + 4 * metric + rng.normal(0, 1, n)), 1, 5)
    if kind == "shared ties":  # metric values repeated across human levels
        metric = np.round(metric, 1)
    if kind == "metric levels":  # the metric has fewer distinct values than the human
        metric, human = np.round(metric * 3), human + rng.random(n)
    return human, metric


@pytest.mark.parametrize("kind", ["distinct", "shared ties", "metric levels"])
def test_resampled_spearman_and_kendall_are_scipys(kind):
    rng = np.random.default_rng(5)
    n = 90
    human, metric = _scores(kind, rng, n)
    pairs = bootstrap.ScorePairs(human, metric, kendall_levels=agreement.KENDALL_LEVELS)
    weights = next(bootstrap.resample_weights(n, 6, seed=2))[:6]

    rhos, taus = pairs.statistics(weights)

    assert taus is not None  # the vectorized path
    for b, counts in enumerate(weights):
        rows = np.repeat(np.arange(n), counts)
        assert rhos[b] == pytest.approx(stats.spearmanr(human[rows], metric[rows]).statistic)
        assert taus[b] == pytest.approx(stats.kendalltau(human[rows], metric[rows]).statistic)


def test_resampled_mean_is_the_mean_of_the_resampled_rows():
    values = np.linspace(0, 1, 13) ** 2
    weights = next(bootstrap.resample_weights(13, 5, seed=1))

    for b, counts in enumerate(weights):
        rows = np.repeat(np.arange(13), counts)
        assert bootstrap.means(weights, values)[b] == pytest.approx(values[rows].mean())


def test_label_intervals_are_the_percentiles_of_sklearn_on_each_resample():
    result = agreement.label_agreement(HUMAN_LABELS, METRIC_LABELS, CLASSES, resamples=120, seed=9)

    h, m = np.array(HUMAN_LABELS), np.array(METRIC_LABELS)
    kappas, accuracies, recalls = [], [], []
    for rows in resampled_rows(30, 120, seed=9):
        kappas.append(sk.cohen_kappa_score(h[rows], m[rows], labels=CLASSES))
        accuracies.append(sk.accuracy_score(h[rows], m[rows]))
        recalls.append(
            sk.recall_score(h[rows], m[rows], labels=CLASSES, average=None, zero_division=np.nan)[1]
        )
    assert (result["kappa"]["low"], result["kappa"]["high"]) == pytest.approx(percentile(kappas))
    assert (result["accuracy"]["low"], result["accuracy"]["high"]) == pytest.approx(
        percentile(accuracies)
    )
    ok = result["per_class"][1]["recall"]
    assert (ok["low"], ok["high"]) == pytest.approx(percentile(recalls))
    assert result["kappa"]["low"] < result["kappa"]["value"] < result["kappa"]["high"]


def test_score_intervals_are_the_percentiles_of_scipy_on_each_resample():
    result = agreement.score_agreement(
        HUMAN_SCORES, METRIC_SCORES, scale=(1, 5), resamples=300, seed=4, level=0.9
    )

    h, m = np.array(HUMAN_SCORES, dtype=float), np.array(METRIC_SCORES)
    rhos, taus, mads = [], [], []
    for rows in resampled_rows(25, 300, seed=4):
        rhos.append(stats.spearmanr(h[rows], m[rows]).statistic)
        taus.append(stats.kendalltau(h[rows], m[rows]).statistic)
        mads.append(np.mean(np.abs((h[rows] - 1) / 4 - m[rows])))
    for name, values in (("spearman", rhos), ("kendall", taus), ("mad", mads)):
        figure = result[name]
        assert (figure["low"], figure["high"]) == pytest.approx(percentile(values, 0.9)), name
    assert result["kendall"]["resamples"] == 300


def test_kendall_of_many_distinct_values_on_both_sides_resamples_fewer_through_scipy(
    monkeypatch,
):
    monkeypatch.setattr(agreement, "KENDALL_ROWS", 2000)
    monkeypatch.setattr(agreement, "KENDALL_MIN_RESAMPLES", 40)
    rng = np.random.default_rng(8)
    human = rng.random(50) * 4 + 1  # no two alike
    metric = (human - 1) / 4 + rng.normal(0, 0.2, 50)

    result = agreement.score_agreement(human, metric, scale=(1, 5), resamples=300, seed=6)

    assert result["kendall"]["resamples"] == 40  # max(40, 2000 // 50)
    taus = [
        stats.kendalltau(human[rows], metric[rows]).statistic
        for rows in resampled_rows(50, 300, seed=6)[:40]
    ]
    assert (result["kendall"]["low"], result["kendall"]["high"]) == pytest.approx(percentile(taus))
    assert result["resamples"] == 300


# Coverage -----------------------------------------------------------------------------------

# 200 datasets of 60 rows. If the 95% interval covers the true value 95% of the time, the
# count of datasets it covers is Binomial(200, 0.95): below 176 (a share under 0.88) with
# probability 2.6e-5, above 198 (over 0.99) with 4.0e-4. A percentile interval at n = 60 runs
# a little short of 95% (0.93 gives a share under 0.88 with probability 0.004), so the
# bounds fail an interval that is wrong, not one that is only approximate. The seeds are
# fixed: the test gives the same answer every run.
DATASETS, ROWS = 200, 60
AGREE, PASS = 0.77, 0.4  # P(the human's label is the metric's verdict), P(verdict = pass)


def _label_datasets(level: float, datasets: int = DATASETS) -> tuple[float, float]:
    """The share of datasets whose interval covers the true accuracy and kappa. The human
    label equals the metric's verdict with probability AGREE, so the accuracy's true
    value is AGREE; kappa's is (AGREE - pe) / (1 - pe), pe the chance agreement of the
    two margins."""
    human_pass = PASS * AGREE + (1 - PASS) * (1 - AGREE)
    chance = PASS * human_pass + (1 - PASS) * (1 - human_pass)
    true_kappa = (AGREE - chance) / (1 - chance)
    covered = {"accuracy": 0, "kappa": 0}
    for seed in range(datasets):
        rng = np.random.default_rng(1000 + seed)
        verdict = rng.random(ROWS) < PASS
        human = np.where(rng.random(ROWS) < AGREE, verdict, ~verdict)
        names = np.array(["fail", "pass"])
        result = agreement.label_agreement(
            names[human.astype(int)], names[verdict.astype(int)], names, seed=seed, level=level
        )
        for name, truth in (("accuracy", AGREE), ("kappa", true_kappa)):
            covered[name] += result[name]["low"] <= truth <= result[name]["high"]
    return covered["accuracy"] / datasets, covered["kappa"] / datasets


def test_95_percent_intervals_of_accuracy_and_kappa_cover_the_true_value_95_percent_of_the_time():
    accuracy, kappa = _label_datasets(0.95)

    assert 0.88 <= accuracy <= 0.99
    assert 0.88 <= kappa <= 0.99


def test_50_percent_intervals_cover_the_true_value_half_of_the_time():
    # 100 datasets: Binomial(100, 0.5) falls outside 35..65 with probability 0.002. The
    # level is honoured, not just some wide interval drawn.
    accuracy, kappa = _label_datasets(0.5, datasets=100)

    assert 0.35 <= accuracy <= 0.65
    assert 0.35 <= kappa <= 0.65


def test_95_percent_intervals_of_spearman_and_kendall_cover_the_population_value():
    # A latent normal pair with correlation 0.6: the metric its first value through the
    # normal CDF (0..1), the human's score the second rounded onto 1..5. The population's
    # rho and tau-b are read from 300,000 rows (their error there, about 0.002, is
    # nothing beside an interval of 60 rows, about 0.4 wide).
    def draw(rng, n):
        latent = rng.standard_normal((n, 2))
        human = 0.6 * latent[:, 0] + 0.8 * latent[:, 1]
        return np.clip(np.round(3 + 1.2 * human), 1, 5), stats.norm.cdf(latent[:, 0])

    population_h, population_m = draw(np.random.default_rng(7), 300_000)
    rho = stats.spearmanr(population_h, population_m).statistic
    tau = stats.kendalltau(population_h, population_m).statistic
    covered = {"spearman": 0, "kendall": 0}
    for seed in range(DATASETS):
        human, metric = draw(np.random.default_rng(5000 + seed), ROWS)
        result = agreement.score_agreement(human, metric, scale=(1, 5), seed=seed)
        for name, truth in (("spearman", rho), ("kendall", tau)):
            covered[name] += result[name]["low"] <= truth <= result[name]["high"]

    assert 0.88 <= covered["spearman"] / DATASETS <= 0.99
    assert 0.88 <= covered["kendall"] / DATASETS <= 0.99


# Edge cases -----------------------------------------------------------------------------------


def test_no_rows_gives_none_everywhere():
    labels = agreement.label_agreement([], [], ["fail", "pass"])
    scores = agreement.score_agreement([], [], scale=(1, 5))
    raters = agreement.kappa_between([None, 2], [1, None])

    for figure in (labels["accuracy"], labels["kappa"], scores["spearman"], scores["mad"]):
        assert figure == {"value": None, "low": None, "high": None}
    assert labels["n"] == scores["n"] == raters["n"] == 0
    assert labels["confusion"] == [[0, 0], [0, 0]]
    assert raters["kappa"]["value"] is None
    assert all(b["count"] == 0 and b["human_mean"] is None for b in scores["calibration"])
    for result in (labels, scores, raters):
        plain_json(result)


def test_one_row_has_an_accuracy_but_no_kappa_or_correlation():
    labels = agreement.label_agreement(["pass"], ["pass"], ["fail", "pass"])
    scores = agreement.score_agreement([4], [0.8], scale=(1, 5))

    assert labels["accuracy"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert labels["kappa"]["value"] is None
    assert scores["spearman"]["value"] is None and scores["kendall"]["value"] is None
    assert scores["mad"]["value"] == pytest.approx(abs(0.75 - 0.8))
    plain_json(labels)
    plain_json(scores)


def test_one_class_on_both_sides_leaves_kappa_undefined_without_a_warning(recwarn):
    result = agreement.label_agreement(["pass"] * 5, ["pass"] * 5, ["fail", "pass"])

    assert result["kappa"] == {"value": None, "low": None, "high": None}
    assert result["accuracy"]["value"] == 1.0
    assert result["per_class"][0]["precision"]["value"] is None  # "fail" never said
    assert not recwarn.list


def test_constant_scores_leave_the_correlations_undefined(recwarn):
    result = agreement.score_agreement([3, 3, 3, 3], [0.1, 0.5, 0.7, 0.9], scale=(1, 5))

    assert result["spearman"]["value"] is None
    assert result["kendall"]["value"] is None
    assert result["mad"]["value"] is not None
    assert not recwarn.list


def test_rows_with_nan_inf_or_nothing_are_dropped():
    human = [1, math.nan, 3, 4, None, 5, math.inf]
    metric = [0.1, 0.2, math.inf, 0.7, 0.5, 0.9, 0.3]

    result = agreement.score_agreement(human, metric, scale=(1, 5))

    assert result["n"] == 3 and result["dropped"] == 4
    assert result["spearman"]["value"] == pytest.approx(1.0)
    plain_json(result)


def test_labels_outside_the_classes_are_counted_as_unknown_and_left_out():
    human = ["pass", "fail", "maybe", "pass", None, "", "fail"]
    metric = ["pass", "fail", "pass", "dunno", "pass", "fail", float("nan")]

    result = agreement.label_agreement(human, metric, ["fail", "pass"])

    assert result["n"] == 2
    assert result["unknown"] == 2
    assert result["confusion"] == [[1, 0], [0, 1]]


# The metric's verdict ---------------------------------------------------------------------------


def test_two_classes_split_at_the_threshold_or_the_middle_of_the_range():
    scores = [0.0, 0.49, 0.5, 0.7, 1.0, math.nan, None]

    assert agreement.metric_classes(scores, ["fail", "pass"]) == [
        "fail", "fail", "pass", "pass", "pass", None, None,
    ]  # fmt: skip
    assert agreement.metric_classes(scores, ["fail", "pass"], threshold=0.7)[:5] == [
        "fail", "fail", "fail", "pass", "pass",
    ]  # fmt: skip
    assert agreement.metric_classes([2, 7], ["no", "yes"], metric_range=(0, 10)) == ["no", "yes"]


def test_more_classes_are_equal_bins_over_the_range_clipped():
    scores = [-1.0, 0.0, 0.33, 1 / 3, 0.5, 2 / 3, 0.99, 1.0, 4.0]

    found = agreement.metric_classes(scores, CLASSES, threshold=0.5)  # a threshold: unused

    assert found == ["bad", "bad", "bad", "ok", "ok", "good", "good", "good", "good"]


def test_disagreement_is_the_distance_on_0_to_1():
    found = agreement.disagreement([0.0, 1.0, 0.5, math.nan], [1.0, 0.75, 1.2, 0.1])

    assert found[:3] == pytest.approx([1.0, 0.25, 0.5])
    assert math.isnan(found[3])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        agreement.label_agreement(["a"], ["a"], ["a"])
    with pytest.raises(ValueError):
        agreement.score_agreement([1], [0.5], scale=(5, 1))
    with pytest.raises(ValueError):
        agreement.score_agreement([1], [0.5], scale=(1, 5), level=1.5)


def test_interval_is_plain_floats_and_none_for_nan():
    found = agreement.interval(np.float64(0.5), math.nan, 1)

    assert found == {"value": 0.5, "low": None, "high": 1.0}
    assert type(found["value"]) is float and type(found["high"]) is float
