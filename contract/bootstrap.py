"""The percentile bootstrap of contract.agreement, vectorized over the resamples.

A resample is `n` rows drawn with replacement (numpy.random.default_rng(seed)); every
statistic of one call is computed on the same resamples, so figures that move together
move together in their intervals too. The point estimates are scipy's and scikit-learn's
(contract.agreement). These functions compute the same statistics for a chunk of
resamples at once from `weights`, a (resamples, n) array of how many times each resample
holds each row: every statistic here depends on the rows only through those counts (a
confusion matrix's diagonal and margins, the count of each distinct value, which gives
its average rank), so the value is the one scipy or scikit-learn gives for the resampled
rows, with no sort per resample. tests/contract/test_agreement.py checks it on a few.

Each statistic is one value per resample, nan where it is undefined (kappa of one class
on both sides, a correlation of constant values).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

# Resampled rows held at once (resamples x rows): arrays under 1 MB, which stay in the
# cache. With 4 MB arrays 10,000 rows x 1,000 resamples took 2.5-3x longer; much smaller
# chunks pay numpy's cost per call more often.
CHUNK_CELLS = 100_000
# Above this many classes a confusion matrix a resample costs more than three tallies.
JOINT_CELLS = 1024


def resample_weights(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """How many times each of `resamples` resamples of `n` rows (drawn with replacement,
    rng.integers) holds each row, as (chunk, n) int64 arrays, a chunk at a time: the same
    for the same (n, resamples, seed)."""
    if n <= 0 or resamples <= 0:
        return
    rng = np.random.default_rng(seed)
    per_chunk = max(1, CHUNK_CELLS // n)
    done = 0
    while done < resamples:
        size = min(per_chunk, resamples - done)
        rows = rng.integers(0, n, size=(size, n))
        rows += (np.arange(size) * n)[:, None]
        yield np.bincount(rows.ravel(), minlength=size * n).reshape(size, n)
        done += size


def percentile_interval(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    """The (1 - level) / 2 and 1 - (1 - level) / 2 quantiles of the resampled statistic,
    over the resamples where it is defined; (None, None) when it is in none."""
    defined = values[~np.isnan(values)]
    if not defined.size:
        return None, None
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Codes:
    """Each row's code 0..size-1 (its class, or its value's place among the distinct
    values), with the rows sorted by code once, so a resample's count of each code is a
    cumulative sum of its weights in that order."""

    codes: np.ndarray
    size: int
    order: np.ndarray
    bounds: np.ndarray  # where each code's rows start in `order`; the last is n

    @classmethod
    def of(cls, codes: np.ndarray, size: int) -> Codes:
        codes = np.asarray(codes, dtype=np.intp)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(size + 1))
        return cls(codes, size, order, bounds)

    @classmethod
    def of_values(cls, values: np.ndarray) -> Codes:
        """Codes of the distinct values, lowest first: ties share one."""
        distinct, codes = np.unique(values, return_inverse=True)
        return cls.of(codes.reshape(-1), len(distinct))

    def then_by(self, other: Codes) -> Codes:
        """The same codes, the rows of each in the order of `other`'s codes."""
        order = np.lexsort((other.codes, self.codes))
        return Codes(self.codes, self.size, order, self.bounds)

    def tally(self, weights: np.ndarray, scratch: Scratch | None = None) -> Tally:
        """Each resample's weights in this order, their running sum, and where each
        code's rows start and end in it; in `scratch`'s arrays when given (the next
        chunk's tally of the same codes overwrites them)."""
        scratch = scratch or Scratch()
        chunk, n = weights.shape
        key = id(self)
        ordered = np.take(weights, self.order, axis=1, out=scratch.get((key, 0), (chunk, n)))
        running = scratch.get((key, 1), (chunk, n + 1))
        running[:, 0] = 0
        np.cumsum(ordered, axis=1, out=running[:, 1:])
        if self.size == n:  # every row a code of its own: views, no copy
            return Tally(ordered, running, running[:, :-1], running[:, 1:], ordered)
        start, end = (scratch.get((key, part), (chunk, self.size)) for part in (2, 3))
        np.take(running, self.bounds[:-1], axis=1, out=start)
        np.take(running, self.bounds[1:], axis=1, out=end)
        counts = np.subtract(end, start, out=scratch.get((key, 4), (chunk, self.size)))
        return Tally(ordered, running, start, end, counts)


class Scratch:
    """Arrays reused from one chunk of resamples to the next. A fresh array of a chunk's
    size (hundreds of KB) is memory the allocator maps anew and gives back when it is
    freed, so each cost its page faults every chunk: 2-3x the arithmetic, measured."""

    def __init__(self):
        self._arrays: dict = {}

    def get(self, key, shape: tuple[int, ...], dtype=np.int64) -> np.ndarray:
        """An array of `shape` (its contents left over), the same memory for the same
        key: a smaller shape (the last chunk) uses the front of it."""
        size = int(np.prod(shape))
        found = self._arrays.get(key)
        if found is None or found.size < size or found.dtype != dtype:
            found = self._arrays[key] = np.empty(size, dtype=dtype)
        return found[:size].reshape(shape)


@dataclass(frozen=True)
class Tally:
    """A chunk of resamples counted by code, all (resamples, ...) int64."""

    ordered: np.ndarray  # (, n): the weights, rows in the codes' order
    running: np.ndarray  # (, n + 1): their cumulative sum, from 0
    start: np.ndarray  # (, size): the weight of the rows with a lower code
    end: np.ndarray  # (, size): with a lower code or this one
    counts: np.ndarray  # (, size): with this code

    def ties(self) -> np.ndarray:
        """The pairs of rows with the same code: sum(c * (c - 1) / 2) = (sum(c^2) - n) / 2."""
        counts = self.counts
        return (np.einsum("bi,bi->b", counts, counts) - self.ordered.shape[1]) // 2


# Labels ------------------------------------------------------------------------------


class LabelPairs:
    """Two label codes 0..k-1 a row (the human's and the metric's, or two people's)."""

    def __init__(self, first: np.ndarray, second: np.ndarray, k: int):
        self.k = k
        self.scratch = Scratch()
        self.first, self.second = np.asarray(first), np.asarray(second)
        if k * k <= JOINT_CELLS:
            self.joint = Codes.of(self.first * k + self.second, k * k)
        else:
            self.joint = None
            self.by_first, self.by_second = Codes.of(first, k), Codes.of(second, k)
            self.same = Codes.of(np.where(self.first == self.second, self.first, k), k + 1)

    def counts(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hits, first, second), each (resamples, k): per class, the rows where both
        gave it (a confusion matrix's diagonal), and each side's count of it (its
        margins: rows the first's, the human's, columns the second's)."""
        scratch = self.scratch
        if self.joint is not None:
            table = self.joint.tally(weights, scratch).counts.reshape(-1, self.k, self.k)
            return (
                np.diagonal(table, axis1=1, axis2=2).copy(),
                table.sum(axis=2),
                table.sum(axis=1),
            )
        return (
            self.same.tally(weights, scratch).counts[:, : self.k].copy(),
            self.by_first.tally(weights, scratch).counts.copy(),
            self.by_second.tally(weights, scratch).counts.copy(),
        )


def kappa(hits: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Cohen's kappa as sklearn.metrics.cohen_kappa_score computes it: 1 - observed
    disagreement / expected disagreement, here in integers, so the expected disagreement
    of one class on both sides is exactly 0 (nan, as sklearn's replace_undefined_by)."""
    n = first.sum(axis=1)
    observed = n * (n - hits.sum(axis=1))
    expected = n * n - np.einsum("bi,bi->b", first, second)
    return _one_minus(observed, expected)


def quadratic_kappa(
    weights: np.ndarray, pairs: LabelPairs, first: np.ndarray, second: np.ndarray
) -> np.ndarray:
    """Cohen's kappa with sklearn's quadratic weights ((i - j)^2 of the label codes). The
    expected weighted disagreement, sum((i - j)^2 * a_i * b_j) / n, is (n * (sum a_i i^2
    + sum b_j j^2) - 2 * sum a_i i * sum b_j j) / n: from the margins, no k x k table;
    integers, so 0 is exactly 0."""
    places = np.arange(pairs.k, dtype=np.int64)
    n = first.sum(axis=1)
    gaps = (pairs.first.astype(np.int64) - pairs.second) ** 2
    observed = n * np.einsum("bi,i->b", weights, gaps)
    expected = n * (first @ places**2 + second @ places**2) - 2 * (first @ places) * (
        second @ places
    )
    return _one_minus(observed, expected)


def _one_minus(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected == 0, np.nan, 1.0 - observed / expected)


def accuracy(hits: np.ndarray, n: int) -> np.ndarray:
    """The share of rows where the two agree."""
    return hits.sum(axis=1) / n


def precision_recall(hits: np.ndarray, human: np.ndarray, metric: np.ndarray):
    """(resamples, k) precision (of the metric's verdicts of each class, the share the
    human gave that class) and recall (of the human's, the share the metric found); nan
    where the class was never predicted / never present (sklearn's zero_division=nan)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return hits / metric, hits / human


# Scores ------------------------------------------------------------------------------


def means(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The mean of `values` over each resample's rows."""
    return np.einsum("bi,i->b", weights, values) / weights.shape[1]


class SpearmanPlan:
    """Spearman's rho of resamples as scipy.stats.spearmanr computes it: Pearson's r of
    the average ranks. A value's average rank in a resample is the weight of the rows
    below it plus (its own weight + 1) / 2: twice that less one is start + end of its
    tally, an integer whose mean over the rows is n, so every sum is exact in int64 and
    a constant side is exactly 0 (nan, as scipy). The sum of the products runs in the
    order of the side with more distinct values (`x`), whose tally holds the weights in
    that order."""

    def __init__(self, x: Codes, y: Codes):
        self.x, self.y = x, y
        self.x_places = None if x.size == len(x.codes) else x.codes[x.order]
        self.y_places = y.codes[x.order]

    def rhos(self, x_tally: Tally, y_tally: Tally, scratch: Scratch) -> np.ndarray:
        chunk, n = x_tally.ordered.shape
        x_rank, x_spread = _doubled_ranks(x_tally, scratch.get("x rank", x_tally.start.shape))
        y_rank, y_spread = _doubled_ranks(y_tally, scratch.get("y rank", y_tally.start.shape))
        if self.x_places is not None:
            x_rank = np.take(x_rank, self.x_places, axis=1, out=scratch.get("x", (chunk, n)))
        y_rank = np.take(y_rank, self.y_places, axis=1, out=scratch.get("y", (chunk, n)))
        cross = np.einsum("bi,bi,bi->b", x_tally.ordered, x_rank, y_rank) - n**3
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = cross / np.sqrt(x_spread.astype(float) * y_spread)
        rho[(x_spread == 0) | (y_spread == 0)] = np.nan
        return np.clip(rho, -1.0, 1.0)


def _doubled_ranks(tally: Tally, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each code's 2 * average rank - 1 (in `out`), and the sum over the rows of its
    squared distance from the mean, n."""
    n = tally.ordered.shape[1]
    rank = np.add(tally.start, tally.end, out=out)
    return rank, np.einsum("bi,bi,bi->b", tally.counts, rank, rank) - n**3


class KendallPlan:
    """Kendall's tau-b of resamples as scipy.stats.kendalltau computes it, where one side
    has few distinct values (`levels`: a human score on a 1..5 scale) and the other any
    number (`values`). With the rows sorted by level, then value (levels.then_by(values)),
    a resample's pairs of rows at two levels ordered as their values are, less those
    ordered against them, are the cumulative sum of its weights in that order (which
    the levels' tally holds) looked up at each row above a level: about (levels - 1) / 2
    passes over the rows, not a sort of every resample."""

    def __init__(self, levels: Codes, values: Codes):
        self.levels, self.values = levels, values
        in_order = values.codes[levels.order]
        if np.any(np.diff(levels.codes[levels.order] * values.size + in_order) < 0):
            raise ValueError("the levels' rows must be ordered by value: levels.then_by(values)")
        self.steps = []
        for level in range(levels.size - 1):
            start, end = levels.bounds[level], levels.bounds[level + 1]
            here, above = in_order[start:end], in_order[end:]
            less = start + np.searchsorted(here, above, side="left")
            less_or_equal = start + np.searchsorted(here, above, side="right")
            # No value of this level shared by a row above it (scores of any value): one
            # look-up, counted twice.
            if np.array_equal(less, less_or_equal):
                less_or_equal = None
            self.steps.append((start, end, less, less_or_equal))

    def taus(self, level_tally: Tally, value_tally: Tally, scratch: Scratch) -> np.ndarray:
        """tau-b of each resample, from the tallies of the levels and of the values of
        the same weights."""
        ordered, running = level_tally.ordered, level_tally.running
        n = ordered.shape[1]
        # Each row above a level, against that level's rows: +1 for each lower value, -1
        # for each higher one: (below) + (below or equal) - (all of that level's).
        score = np.zeros(ordered.shape[0], dtype=np.int64)
        chunk = ordered.shape[0]
        for start, end, less, less_or_equal in self.steps:
            reach = np.take(running, less, axis=1, out=scratch.get("reach", (chunk, len(less))))
            if less_or_equal is None:
                score += 2 * np.einsum("bi,bi->b", ordered[:, end:], reach)
            else:
                more = scratch.get("reach more", (chunk, len(less)))
                reach += np.take(running, less_or_equal, axis=1, out=more)
                score += np.einsum("bi,bi->b", ordered[:, end:], reach)
            score -= (running[:, start] + running[:, end]) * (running[:, n] - running[:, end])
        pairs = n * (n - 1) // 2
        level_ties, value_ties = level_tally.ties(), value_tally.ties()
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = score / np.sqrt(float(pairs) - level_ties) / np.sqrt(float(pairs) - value_ties)
        tau[(level_ties == pairs) | (value_ties == pairs)] = np.nan
        return np.clip(tau, -1.0, 1.0)


class ScorePairs:
    """Two scores a row (the human's and the metric's): Spearman's rho of resamples, and
    Kendall's tau-b when one side has at most `kendall_levels` distinct values (else
    `kendall` is None). Both are symmetric, so the side with fewer distinct values is
    Kendall's levels, whatever side it is."""

    def __init__(self, x: np.ndarray, y: np.ndarray, *, kendall_levels: int):
        few, many = Codes.of_values(x), Codes.of_values(y)
        if few.size > many.size:
            few, many = many, few
        self.few, self.many = few.then_by(many), many
        self.scratch = Scratch()
        self.spearman = SpearmanPlan(self.many, self.few)
        self.kendall = KendallPlan(self.few, self.many) if few.size <= kendall_levels else None

    def statistics(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(rho, tau) of each resample; tau None without the vectorized path."""
        scratch = self.scratch
        few, many = self.few.tally(weights, scratch), self.many.tally(weights, scratch)
        rho = self.spearman.rhos(many, few, scratch)
        return rho, (self.kendall.taus(few, many, scratch) if self.kendall else None)
