"""A judge's own noise: what K scorings of the same outputs say of a metric's stability.

A metric that asks a model (a judge) can score one output differently from one call to
the next, and GEPA's minibatch gate, which accepts a candidate only when it scores higher
on a few cases, then decides by chance. An evaluation that scores each case K times, each
time in a fresh process, measures that: how many cases change verdict, by how much their
scores vary, and how sure the evaluation's own mean is.

Plain numpy, no Django: the summary (evaluations.summary) streams the cases' columns into
two arrays, one row a case and one column a scoring, and hands them here. Intervals are
percentile bootstraps over cases (`numpy.random.default_rng(seed)`, `resamples` of them),
so a 30-case evaluation says how little it knows.
"""

from __future__ import annotations

import numpy as np

RESAMPLES = 1000
LEVEL = 0.95
EXAMPLES = 10  # case indexes listed, the largest spreads first
SAME_SCORE = 1e-9  # two scores closer than this are the same score
# A statistic that is a mean of few distinct values (a judge's 0 and 1, or the per-case
# means of K such scores) is resampled as counts per value, one multinomial draw a
# resample: the same distribution as drawing cases, at a cost that does not grow with
# the cases. Past this many distinct values, cases are drawn one by one.
GROUPED_MAX = 1024
# Case draws held at once when cases are drawn one by one (8 bytes each): memory stays
# bounded whatever the number of cases, the resamples made a batch at a time.
CELLS = 2_000_000


def interval(value: float | None, low: float | None, high: float | None) -> dict:
    """A figure and its interval, as the summary keeps it."""
    return {"value": value, "low": low, "high": high}


def resampled_means(
    values: np.ndarray,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    grouped: bool | None = None,
) -> np.ndarray:
    """The means of `resamples` bootstrap resamples of `values` (each n draws with
    replacement). `grouped`: draw counts per distinct value (True), or cases one by one
    (False); None picks by the number of distinct values (GROUPED_MAX). Drawn one by one,
    the resamples are exactly those of `rng.integers(0, n, (resamples, n))`."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.empty(0)
    distinct, counts = np.unique(values, return_counts=True)
    if grouped is None:
        grouped = len(distinct) <= GROUPED_MAX
    if grouped:
        drawn = rng.multinomial(n, counts / n, size=resamples)
        return drawn @ distinct / n
    means = np.empty(resamples)
    batch = max(1, CELLS // n)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        means[start : start + size] = values[picks].mean(axis=1)
    return means


def mean_interval(
    values: np.ndarray, *, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> dict:
    """The mean of `values` and its percentile bootstrap interval at `level`; every
    figure None for no values."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return interval(None, None, None)
    means = resampled_means(values, resamples=resamples, seed=seed)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return interval(float(values.mean()), float(low), float(high))


def flipped(statuses: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """For each case (a row of K scorings), whether its K verdicts are not all the same:
    a status that differs from the first scoring's, a valid score where the first had
    none (or none where it had one), or a score that differs from the first's.

    `statuses`: (n, K) codes, any integers, equal for equal statuses; `scores`: (n, K)
    floats, NaN where a scoring has no valid score."""
    statuses = np.asarray(statuses)
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0:
        return np.zeros(len(scores), dtype=bool)
    same_status = (statuses == statuses[:, :1]).all(axis=1)
    missing = np.isnan(scores)
    same_presence = (missing == missing[:, :1]).all(axis=1)
    first = scores[:, :1]
    with np.errstate(invalid="ignore"):
        close = np.abs(scores - first) <= SAME_SCORE
    same_score = (close | missing | missing[:, :1]).all(axis=1)
    return ~(same_status & same_presence & same_score)


def case_variances(scores: np.ndarray) -> np.ndarray:
    """Each case's variance of its valid scores (ddof=1); NaN for a case with fewer
    than two."""
    scores = np.asarray(scores, dtype=float)
    counts = (~np.isnan(scores)).sum(axis=1)
    variances = np.full(len(scores), np.nan)
    enough = counts >= 2
    if enough.any():
        variances[enough] = np.nanvar(scores[enough], axis=1, ddof=1)
    return variances


def case_means(scores: np.ndarray) -> np.ndarray:
    """Each case's mean of its valid scores; NaN for a case with none."""
    scores = np.asarray(scores, dtype=float)
    counts = (~np.isnan(scores)).sum(axis=1)
    sums = np.where(np.isnan(scores), 0.0, scores).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _largest_spreads(
    indexes: np.ndarray, spreads: np.ndarray, changed: np.ndarray, limit: int
) -> list[int]:
    """The indexes of the cases that changed verdict, the largest spread first (a case
    whose status changed with fewer than two valid scores has no spread and comes
    first), ties by index."""
    picked = np.flatnonzero(changed)
    if not len(picked) or limit <= 0:
        return []
    key = np.where(np.isnan(spreads[picked]), np.inf, spreads[picked])
    order = np.lexsort((indexes[picked], -key))[:limit]
    return [int(i) for i in indexes[picked][order]]


class Scorings:
    """The K scorings of up to `capacity` cases, added a case at a time (as a summary
    streams them from the database) into two preallocated arrays: memory is n × K
    numbers whatever else the cases hold. A case scored another number of times than K
    (its first scoring failed, so it was not scored again) is left out."""

    def __init__(self, k: int, capacity: int) -> None:
        self.k = k
        self.statuses = np.zeros((capacity, k), dtype=np.int16)
        self.scores = np.full((capacity, k), np.nan)
        self.indexes = np.zeros(capacity, dtype=np.int64)
        self.codes: dict[str, int] = {}
        self.n = 0

    def add(self, index: int, verdicts: list[tuple[str, object]]) -> None:
        """One case's scorings, in order: (status, score) each; a score counts only for
        a "valid" scoring, and only a finite number."""
        if len(verdicts) != self.k or self.n == len(self.scores):
            return
        row = self.n
        for j, (status, score) in enumerate(verdicts):
            self.statuses[row, j] = self.codes.setdefault(str(status), len(self.codes))
            if status == "valid" and _finite(score):
                self.scores[row, j] = float(score)
        self.indexes[row] = index
        self.n += 1

    def noise(self, **options) -> dict:
        n = self.n
        return noise(self.statuses[:n], self.scores[:n], self.indexes[:n], **options)


def _finite(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return bool(np.isfinite(value))


def noise(
    statuses: np.ndarray,
    scores: np.ndarray,
    indexes: np.ndarray | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    examples: int = EXAMPLES,
) -> dict:
    """What K scorings of n cases say of the metric's noise (the schema of an
    evaluation's summary["noise"]):

    - k, n: the scorings a case and the cases scored that many times;
    - flip_share: the share of cases whose K verdicts are not all the same, with its
      bootstrap interval over cases;
    - variance: the mean over cases of each case's variance of its valid scores
      (ddof=1; cases with two valid scores or more), spread_mean the mean of their
      standard deviations;
    - mean: the mean over cases of each case's mean of its valid scores, with its own
      bootstrap interval: how sure the evaluation's mean is, its noise included;
    - examples: the indexes of the cases that changed verdict with the largest spread.

    `statuses` and `scores` as `flipped` reads them; `indexes` the cases' indexes (by
    default their rows' numbers)."""
    scores = np.asarray(scores, dtype=float)
    statuses = np.asarray(statuses)
    n = len(scores)
    k = int(scores.shape[1]) if scores.ndim == 2 else 0
    indexes = np.arange(n) if indexes is None else np.asarray(indexes)
    changed = flipped(statuses, scores)
    variances = case_variances(scores)
    known = ~np.isnan(variances)
    spreads = np.sqrt(variances)
    means = case_means(scores)
    if n:
        flips = mean_interval(changed.astype(float), resamples=resamples, seed=seed, level=level)
    else:
        flips = interval(None, None, None)
    return {
        "k": k,
        "n": n,
        "flip_share": flips,
        "variance": float(variances[known].mean()) if known.any() else None,
        "spread_mean": float(spreads[known].mean()) if known.any() else None,
        "mean": mean_interval(
            means[~np.isnan(means)], resamples=resamples, seed=seed + 1, level=level
        ),
        "examples": _largest_spreads(indexes, spreads, changed, examples),
    }
