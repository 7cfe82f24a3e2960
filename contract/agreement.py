"""Does the metric agree with people? The figures, each with a bootstrap interval.

A dataset may carry a person's judgement of each row: a human label (pass/fail, or ordered
classes such as bad/ok/good) or a human score (a number on a declared scale such as 1..5).
These functions compare it with the metric's scores. Each figure is a point estimate
from scikit-learn or scipy and a percentile bootstrap interval over rows (contract.bootstrap
computes the resamples' statistics vectorized: they are the same statistics), so a
30-row dataset says how little it knows. Results are plain JSON-able dicts; an undefined
figure (kappa of one class, Spearman of constant scores, anything of no rows) is None.

Kendall's tau is the costly one: the vectorized path needs one of the two to have at most
KENDALL_LEVELS distinct values (a human score on a declared scale has them); otherwise each
resample is scipy.stats.kendalltau on the resampled rows, and above KENDALL_ROWS rows
resampled in all the number of resamples drops to what that budget allows (at least
KENDALL_MIN_RESAMPLES), said in its interval's "resamples".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from contract import bootstrap

# At most this many distinct values on one side for Kendall's vectorized path (its cost
# grows with levels x distinct values of the other side x resamples).
KENDALL_LEVELS = 12
# Above this many rows resampled in all (n x resamples), Kendall's tau through scipy gets
# fewer resamples, never under KENDALL_MIN_RESAMPLES: 200 of 10,000 rows, about 0.25 s on
# this machine (scipy takes ~1.2 ms a resample); 100 of 200,000 rows, about 3 s.
KENDALL_ROWS = 2_000_000
KENDALL_MIN_RESAMPLES = 100
# Kappa compares labels: two people's values past this many distinct ones are scores, and
# a k x k confusion matrix of them would be large and mean little.
KAPPA_LABELS = 200


def interval(value, low, high) -> dict:
    """{"value", "low", "high"} as Python floats; None for an undefined (nan) one."""
    return {"value": _float(value), "low": _float(low), "high": _float(high)}


def label_agreement(
    human: Sequence[str],
    metric: Sequence[str],
    classes: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """The human's labels against the metric's verdicts (metric_classes), over the rows
    where both are given: accuracy, Cohen's kappa, each class's precision and recall,
    and the confusion matrix (rows the human's class, columns the metric's, in `classes`
    order). A row with a label none of `classes` is left out and counted in "unknown"."""
    classes = _classes(classes)
    _check(resamples, level)
    place = {c: i for i, c in enumerate(classes)}
    kept_human, kept_metric, unknown = [], [], 0
    for a, b in zip(human, metric, strict=True):
        if not (_given(a) and _given(b)):
            continue
        a, b = _label(a, place), _label(b, place)
        if a is None or b is None:
            unknown += 1
            continue
        kept_human.append(a)
        kept_metric.append(b)
    h = np.array(kept_human, dtype=np.intp)
    m = np.array(kept_metric, dtype=np.intp)
    n, k = len(h), len(classes)
    result = {"n": n, "unknown": unknown, "resamples": resamples, "classes": list(classes)}
    if not n:
        empty = interval(None, None, None)
        return {
            **result,
            "accuracy": empty,
            "kappa": empty,
            "per_class": [
                {"class": c, "support": 0, "precision": empty, "recall": empty} for c in classes
            ],
            "confusion": [[0] * k for _ in classes],
        }
    sk = _sklearn_metrics()
    codes = list(range(k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        confusion = sk.confusion_matrix(h, m, labels=codes)
        accuracy = sk.accuracy_score(h, m)
        kappa = sk.cohen_kappa_score(h, m, labels=codes, replace_undefined_by=np.nan)
        precision, recall, _, support = sk.precision_recall_fscore_support(
            h, m, labels=codes, zero_division=np.nan
        )
    drawn = {"accuracy": [], "kappa": [], "precision": [], "recall": []}
    label_pairs = bootstrap.LabelPairs(h, m, k)
    for weights in bootstrap.resample_weights(n, resamples, seed):
        hits, by_human, by_metric = label_pairs.counts(weights)
        drawn["accuracy"].append(bootstrap.accuracy(hits, n))
        drawn["kappa"].append(bootstrap.kappa(hits, by_human, by_metric))
        p, r = bootstrap.precision_recall(hits, by_human, by_metric)
        drawn["precision"].append(p)
        drawn["recall"].append(r)
    drawn = {key: _stack(chunks, k) for key, chunks in drawn.items()}
    return {
        **result,
        "accuracy": _with_interval(accuracy, drawn["accuracy"], level),
        "kappa": _with_interval(kappa, drawn["kappa"], level),
        "per_class": [
            {
                "class": c,
                "support": int(support[i]),
                "precision": _with_interval(precision[i], drawn["precision"][:, i], level),
                "recall": _with_interval(recall[i], drawn["recall"][:, i], level),
            }
            for i, c in enumerate(classes)
        ],
        "confusion": confusion.tolist(),
    }


def score_agreement(
    human: Sequence[float],
    metric: Sequence[float],
    *,
    scale: tuple[float, float],
    metric_range: tuple[float, float] = (0.0, 1.0),
    bins: int = 10,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """The human's scores (on `scale`) against the metric's (on `metric_range`), over the
    rows where both are finite numbers: Spearman's rho, Kendall's tau-b, the mean absolute
    difference of the two each put on 0..1 (and clipped to it), and the calibration: the
    metric's scores in `bins` equal-width bins over metric_range (values outside it in the
    end bins), each with the mean human score of its rows, on the human scale."""
    lo, hi = _range(scale, "scale")
    m_lo, m_hi = _range(metric_range, "metric_range")
    _check(resamples, level)
    if bins < 1:
        raise ValueError("bins must be at least 1")
    h, m = _numbers(human), _numbers(metric)
    if len(h) != len(m):
        raise ValueError("human and metric must have one value a row")
    both = np.isfinite(h) & np.isfinite(m)
    h, m = h[both], m[both]
    n = len(h)
    distance = np.abs(_unit(h, lo, hi) - _unit(m, m_lo, m_hi))
    result = {
        "n": n,
        "dropped": len(both) - n,
        "resamples": resamples,
        "calibration": calibration(h, m, metric_range=(m_lo, m_hi), bins=bins),
    }
    if not n:
        empty = interval(None, None, None)
        return {**result, "spearman": empty, "kendall": {**empty, "resamples": 0}, "mad": empty}
    stats = _scipy_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = stats.spearmanr(h, m).statistic if n > 1 else math.nan
        tau = stats.kendalltau(h, m).statistic if n > 1 else math.nan
    resampled = bootstrap.ScorePairs(h, m, kendall_levels=KENDALL_LEVELS)
    kendall_resamples = resamples if resampled.kendall else _kendall_resamples(n, resamples)
    drawn = {"spearman": [], "kendall": [], "mad": []}
    done = 0
    for weights in bootstrap.resample_weights(n, resamples, seed):
        drawn["mad"].append(bootstrap.means(weights, distance))
        rhos, taus = resampled.statistics(weights)
        drawn["spearman"].append(rhos)
        if taus is not None:
            drawn["kendall"].append(taus)
        elif done < kendall_resamples:
            drawn["kendall"].append(_kendall_each(h, m, weights[: kendall_resamples - done]))
        done += len(weights)
    drawn = {key: _stack(chunks) for key, chunks in drawn.items()}
    return {
        **result,
        "spearman": _with_interval(rho, drawn["spearman"], level),
        "kendall": {
            **_with_interval(tau, drawn["kendall"], level),
            "resamples": kendall_resamples,
        },
        "mad": _with_interval(float(distance.mean()), drawn["mad"], level),
    }


def calibration(
    human: np.ndarray, metric: np.ndarray, *, metric_range: tuple[float, float], bins: int
) -> list[dict]:
    """[{"lo", "hi", "count", "human_mean"}] a bin of the metric's scores: bin i holds the
    scores from its lo up to, not including, its hi (the last its hi too); scores outside
    metric_range count in the end bins. human_mean is None for an empty bin."""
    edges = _edges(metric_range, bins)
    where = _bin_of(metric, edges)
    counts = np.bincount(where, minlength=bins)
    sums = np.bincount(where, weights=human, minlength=bins)
    return [
        {
            "lo": edges[i],
            "hi": edges[i + 1],
            "count": int(counts[i]),
            "human_mean": float(sums[i] / counts[i]) if counts[i] else None,
        }
        for i in range(bins)
    ]


def metric_classes(
    scores: Sequence[float],
    classes: Sequence[str],
    *,
    threshold: float | None = None,
    metric_range: tuple[float, float] = (0.0, 1.0),
) -> list[str | None]:
    """The metric's verdict on each score as one of the ordered classes (lowest first).
    Two classes: the higher when the score reaches `threshold` (default: the middle of
    metric_range). More: equal-width bins over metric_range, scores outside it in the end
    bins, a score on an edge in the higher bin; `threshold` is not used (callers pass the
    stored one whatever the classes). None for a score that is not a finite number."""
    classes = _classes(classes)
    lo, hi = _range(metric_range, "metric_range")
    numbers = _numbers(scores)
    if len(classes) == 2:
        cut = (lo + hi) / 2.0 if threshold is None else float(threshold)
        places = (numbers >= cut).astype(np.intp)
    else:
        places = _bin_of(numbers, _edges((lo, hi), len(classes)))
    return [
        classes[place] if given else None
        for place, given in zip(places.tolist(), np.isfinite(numbers).tolist(), strict=True)
    ]


def kappa_between(
    a: Sequence[str | float | None],
    b: Sequence[str | float | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """Two people's labels of the same rows (None: that person did not label the row),
    over the rows both labelled: Cohen's kappa and the share of equal labels. When every
    label is a number (or a string that reads as one: "4" and "4.0" are one label), the
    scale is ordered and "weighted_kappa" (quadratic weights) is there too; its labels are
    every integer from the lowest to the highest when all are integers, so a level nobody
    used still counts in the distance, else the distinct values. Kappa is for labels:
    past KAPPA_LABELS of them (scores of any value) the kappas are None."""
    _check(resamples, level)
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if _given(x) and _given(y)]
    numeric = bool(pairs) and all(_reads_as_number(x) and _reads_as_number(y) for x, y in pairs)
    labels = _rater_labels(pairs, numeric)
    place = {v: i for i, v in enumerate(labels)}
    key = float if numeric else _text
    first = np.array([place[key(x)] for x, _ in pairs], dtype=np.intp)
    second = np.array([place[key(y)] for _, y in pairs], dtype=np.intp)
    n, k = len(first), len(labels)
    kappas = ("kappa", "weighted_kappa") if numeric else ("kappa",)
    result = {"n": n, "resamples": resamples, "labels": labels if k <= KAPPA_LABELS else None}
    if not n:
        return {
            **result,
            "agreement": interval(None, None, None),
            **{name: interval(None, None, None) for name in kappas},
        }
    sk = _sklearn_metrics()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = {"agreement": sk.accuracy_score(first, second)}
        if k <= KAPPA_LABELS:
            codes = list(range(k))
            point["kappa"] = sk.cohen_kappa_score(
                first, second, labels=codes, replace_undefined_by=np.nan
            )
            if numeric:
                point["weighted_kappa"] = sk.cohen_kappa_score(
                    first, second, labels=codes, weights="quadratic", replace_undefined_by=np.nan
                )
    drawn = {name: [] for name in point}
    label_pairs = bootstrap.LabelPairs(first, second, k)
    for weights in bootstrap.resample_weights(n, resamples, seed):
        hits, by_first, by_second = label_pairs.counts(weights)
        drawn["agreement"].append(bootstrap.accuracy(hits, n))
        if "kappa" in point:
            drawn["kappa"].append(bootstrap.kappa(hits, by_first, by_second))
        if "weighted_kappa" in point:
            drawn["weighted_kappa"].append(
                bootstrap.quadratic_kappa(weights, label_pairs, by_first, by_second)
            )
    return {
        **result,
        **{name: interval(None, None, None) for name in kappas},
        **{name: _with_interval(point[name], _stack(drawn[name]), level) for name in point},
    }


def _rater_labels(pairs: list[tuple], numeric: bool) -> list:
    """The labels two people used, in order: numbers (every integer between the lowest
    and the highest when they are all integers, not too many), else texts."""
    if not numeric:
        return sorted({_text(v) for pair in pairs for v in pair})
    values = sorted({float(v) for pair in pairs for v in pair})
    if values and all(v.is_integer() for v in values):
        lo, hi = int(values[0]), int(values[-1])
        if hi - lo < KAPPA_LABELS:
            return [float(v) for v in range(lo, hi + 1)]
    return values


def disagreement(human01: Sequence[float], metric01: Sequence[float]) -> list[float]:
    """|human - metric| of each row, both already on 0..1 (clipped to it), to rank the
    cases they disagree on most; nan where either is not a finite number."""
    x, y = _numbers(human01), _numbers(metric01)
    if len(x) != len(y):
        raise ValueError("both must have one value a row")
    return np.abs(np.clip(x, 0.0, 1.0) - np.clip(y, 0.0, 1.0)).tolist()


# Helpers -----------------------------------------------------------------------------


# Imported when a figure is computed: scipy.stats and scikit-learn take about a second and
# tens of MB to import, and every web process imports this module (through
# evaluations.summary) though only the worker computes the figures.
def _sklearn_metrics():
    from sklearn import metrics

    return metrics


def _scipy_stats():
    from scipy import stats

    return stats


def _float(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _numbers(values) -> np.ndarray:
    """Each value as a float, nan for what is no finite number (None, nan, inf, a bool,
    text). Plain ints and floats, or an array of them, in one numpy conversion."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        found = values.astype(float).reshape(-1)
    else:
        values = list(values)
        if not all(type(v) is float or type(v) is int for v in values):
            values = [_number(v) for v in values]
        found = np.array(values, dtype=float).reshape(-1)
    found[~np.isfinite(found)] = np.nan
    return found


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return math.nan
    return float(value)


def _given(value) -> bool:
    """Whether a label was given: not None, nan, inf or empty text."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip()) and _finite_if_number(value)
    if isinstance(value, float | np.floating):
        return math.isfinite(value)
    return True


def _finite_if_number(text: str) -> bool:
    """False for text that reads as nan or inf, which is no label."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return True


def _reads_as_number(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float | np.number):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _text(value) -> str:
    return value if isinstance(value, str) else str(value)


def _label(value, place: dict[str, int]) -> int | None:
    """The class index of a label; None for one that is none of the classes."""
    found = place.get(value) if isinstance(value, str) else None
    return found if found is not None else place.get(_text(value).strip())


def _classes(classes: Sequence[str]) -> list[str]:
    classes = [str(c) for c in classes]
    if len(classes) < 2:
        raise ValueError("at least two classes are needed")
    if len(set(classes)) != len(classes):
        raise ValueError("the classes must be distinct")
    return classes


def _range(pair: tuple[float, float], name: str) -> tuple[float, float]:
    lo, hi = float(pair[0]), float(pair[1])
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must be two finite numbers, the lower first")
    return lo, hi


def _check(resamples: int, level: float) -> None:
    if resamples < 0:
        raise ValueError("resamples must not be negative")
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")


def _unit(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)


def _edges(metric_range: tuple[float, float], bins: int) -> list[float]:
    # lo + width * i / bins, not lo + i * (width / bins): 0.3 is an edge of ten bins over
    # 0..1, where 3 * 0.1 is 0.30000000000000004 and would bin 0.3 below it.
    lo, hi = metric_range
    return [lo + (hi - lo) * i / bins for i in range(bins)] + [hi]


def _bin_of(values: np.ndarray, edges: list[float]) -> np.ndarray:
    """Each value's bin: the last edge at or below it, clipped to the bins."""
    inner = np.asarray(edges[1:-1], dtype=float)
    return np.searchsorted(inner, values, side="right").astype(np.intp)


def _stack(chunks: list[np.ndarray], width: int | None = None) -> np.ndarray:
    if chunks:
        return np.concatenate(chunks)
    return np.empty((0,) if width is None else (0, width))


def _with_interval(value, drawn: np.ndarray, level: float) -> dict:
    value = _float(value)
    if value is None:
        return interval(None, None, None)
    low, high = bootstrap.percentile_interval(drawn, level)
    return interval(value, low, high)


def _kendall_resamples(n: int, resamples: int) -> int:
    return min(resamples, max(KENDALL_MIN_RESAMPLES, KENDALL_ROWS // max(n, 1)))


def _kendall_each(h: np.ndarray, m: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each resample through scipy, for data the vectorized path does
    not fit (many distinct values on both sides)."""
    stats = _scipy_stats()
    rows = np.arange(len(h))
    taus = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for counts in weights:
            drawn = np.repeat(rows, counts)
            taus.append(stats.kendalltau(h[drawn], m[drawn]).statistic)
    return np.array(taus, dtype=float)
