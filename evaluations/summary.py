"""What the results page shows of all of an evaluation's cases, computed once at its end.

An evaluation can have 200,000 cases: neither the worker nor a page may hold them all, and
a page that went over them on every view would be slow on every view. So the summary is
asked of the database once, when the evaluation ends (by the worker, or by the sweep that
ends a lost one), and kept in `Evaluation.summary`. Counts, sums, means and bins are
aggregates; medians and percentiles are one or two rows of an ordered slice (LIMIT and
OFFSET along the model's indexes); examples are the first indexes of a filtered, ordered
query. Only the named scores, inside the JSON `scores` column, are read here, streamed
CHUNK rows at a time: a pass for their count, sum, min and max, and a pass for their bins
that usually finds their medians too (see _named_stats). Memory stays bounded whatever the
number of cases, and 200,000 of them take seconds.
"""

from __future__ import annotations

import heapq
import math
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Container
from itertools import accumulate

from django.db.models import (
    Avg,
    BooleanField,
    Case,
    Count,
    F,
    FloatField,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Abs, Substr
from django.db.models.lookups import LessThanOrEqual

from contract import noise
from evaluations.human_summary import human_summary
from evaluations.models import Evaluation, EvaluationCase

# 2: the feedback's repeated_share (the same words for outputs that scored differently,
# or below the top score) in place of identical_share (for any different outputs).
# 3: "noise", what K scorings of each case say of the metric's own noise (contract.noise).
VERSION = 3
STATUSES = ("valid", "invalid", "error", "timeout", "skipped")
BINS = 20
EXAMPLES = 5  # case indexes shown for each group of failures
LISTED = 10  # case indexes (or feedbacks) in the other lists
TEXT_CHARS = 300  # of a top feedback
SAME_SCORE = 1e-9
# Groups of failures kept: the problem codes are few, but exception class names are the
# metric's own, and a summary must not grow with the number of cases.
FAILURE_GROUPS = 50
# Named scores kept: at most 100 a case (skynet.report), but each case may name others.
NAMES = 100
CHUNK = 2000  # rows a streaming pass reads at a time
HELD = 20_000  # values of one named score held at most, to pick its median among them
DIGIT = 16  # bits of the values' keys a streaming pass tells apart, finding a median
UNHELPFUL_KINDS = ("", "empty", "generic")


def summarize(evaluation: Evaluation) -> dict:
    """The summary of the evaluation's cases (the schema of Evaluation.summary)."""
    cases = EvaluationCase.objects.filter(evaluation=evaluation).order_by()
    totals = _totals(cases)
    n = totals["cases"]
    counts = {status: totals[status] for status in STATUSES}
    scored = cases.filter(status="valid", score__isnull=False)
    score = _column_stats(scored, "score")
    return {
        "version": VERSION,
        "cases": n,
        "total": evaluation.total,
        "counts": counts,
        "invalid_share": _share(n - counts["valid"], n),
        "score": score,
        "named": _named_stats(cases.filter(status="valid", scores__isnull=False)),
        "failures": _failures(cases),
        "feedback": _feedback(cases, scored, score, totals),
        "slowest": _indexes(cases.order_by("-total_ms", "index"), LISTED),
        "time": _time(cases, totals),
        "cost": _cost(totals),
        "flaky": _flaky(cases, totals) if evaluation.second == Evaluation.Second.REPEAT else None,
        "noise": _noise(cases, evaluation, totals)
        if evaluation.second == Evaluation.Second.REPEAT
        else None,
        "agreement": _agreement(cases) if evaluation.second == Evaluation.Second.COMPARE else None,
        "human": human_summary(evaluation, cases),
    }


def _totals(cases: QuerySet) -> dict:
    """Every count, sum and mean of the summary, in one pass over the evaluation's rows."""
    returned = ~Q(feedback_kind="")
    return cases.aggregate(
        cases=Count("pk"),
        **{status: Count("pk", filter=Q(status=status)) for status in STATUSES},
        returned=Count("pk", filter=returned),
        empty=Count("pk", filter=Q(feedback_kind="empty")),
        generic=Count("pk", filter=Q(feedback_kind="generic")),
        feedback_length_mean=Avg("feedback_length", filter=returned),
        feedback_length_max=Max("feedback_length", filter=returned),
        total_ms_mean=Avg("total_ms"),
        metric_ms_mean=Avg("metric_ms"),
        run_ms_mean=Avg("run_ms"),
        task_usd=Sum("task_usd"),
        metric_usd=Sum("metric_usd"),
        model_calls=Sum("model_calls"),
        differs=Count("pk", filter=Q(differs=True)),
        scored_twice=Count("pk", filter=~Q(second_status="")),
    )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _number(value) -> float | None:
    # PostgreSQL's averages of integer columns are decimals; JSON wants floats.
    return None if value is None else float(value)


def _indexes(ordered: QuerySet, limit: int) -> list[int]:
    return list(ordered.values_list("index", flat=True)[:limit])


# Stats of a column --------------------------------------------------------------------


def _edges(lo: float, hi: float) -> list[float]:
    """BINS + 1 edges from lo to hi (two when lo == hi: one bin). Bin i holds the values
    from edge i up to, not including, edge i + 1; the last bin holds hi too."""
    if lo == hi:
        return [lo, hi]
    width = (hi - lo) / BINS
    if math.isinf(width):  # the range of floats is wider than the largest float
        width = hi / BINS - lo / BINS
    return [lo + i * width for i in range(BINS)] + [hi]


def _bins(edges: list[float], counts) -> list[dict]:
    return [{"lo": edges[i], "hi": edges[i + 1], "count": count} for i, count in enumerate(counts)]


def _stats(n: int, mean, median, lo, hi, bins: list[dict]) -> dict:
    if not n:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None, "bins": []}
    return {"n": n, "mean": mean, "median": median, "min": lo, "max": hi, "bins": bins}


def _at(ordered: QuerySet, field: str, k: int, count: int = 1) -> list[float]:
    """The values at 0-based ranks k.. k + count - 1 of `field`: an ordered slice, which
    an index on (evaluation, field) answers without sorting."""
    return list(ordered.order_by(field).values_list(field, flat=True)[k : k + count])


def _median(values: QuerySet, field: str, n: int) -> float | None:
    if not n:
        return None
    if n % 2:
        return float(_at(values, field, n // 2)[0])
    a, b = _at(values, field, n // 2 - 1, 2)
    return (a + b) / 2


def _percentile(values: QuerySet, field: str, n: int, q: float) -> float | None:
    """The q-quantile of `field`, interpolated between the two closest ranks."""
    if not n:
        return None
    position = (n - 1) * q
    k = math.floor(position)
    found = _at(values, field, k, 2)
    if len(found) == 1 or position == k:
        return float(found[0])
    return found[0] + (found[1] - found[0]) * (position - k)


def _column_stats(values: QuerySet, field: str) -> dict:
    """Stats of a float column over `values` (rows where it is not null): aggregates for
    n, mean, min and max, an ordered slice for the median, one query for every bin."""
    found = values.aggregate(n=Count(field), mean=Avg(field), lo=Min(field), hi=Max(field))
    n = found["n"]
    if not n:
        return _stats(0, None, None, None, None, [])
    edges = _edges(found["lo"], found["hi"])
    last = len(edges) - 2
    bins = values.aggregate(
        **{
            f"bin{i}": Count(
                "pk",
                filter=Q(**{f"{field}__gte": edges[i]})
                & Q(**{f"{field}__lte" if i == last else f"{field}__lt": edges[i + 1]}),
            )
            for i in range(last + 1)
        }
    )
    return _stats(
        n,
        _number(found["mean"]),
        _median(values, field, n),
        found["lo"],
        found["hi"],
        _bins(edges, (bins[f"bin{i}"] for i in range(last + 1))),
    )


# Stats of the named scores, streamed --------------------------------------------------

_TOP = 1 << 63
_ALL = (1 << 64) - 1
_DOUBLE, _WORD = struct.Struct("<d"), struct.Struct("<Q")


def _key(value: float) -> int:
    """The float's 64 bits as an unsigned integer in the floats' order (the negative ones
    flipped): the top bits of the keys split any range of values, however wide."""
    bits = _WORD.unpack(_DOUBLE.pack(value))[0]
    return _ALL - bits if bits & _TOP else bits | _TOP


def _value(key: int) -> float:
    """The float of a key. No value is -0.0 here (it is counted as 0.0), so its key
    stands for the negative float nearest to it: a bound below 0.0, not equal to it."""
    key = _TOP - 2 if key == _TOP - 1 else key
    return _DOUBLE.unpack(_WORD.pack(key ^ _TOP if key & _TOP else _ALL - key))[0]


def _as_score(value) -> float | None:
    """A named score as a float; None for anything but a finite number."""
    if type(value) is not float and type(value) is not int:  # a bool is neither
        return None
    try:
        value = float(value) + 0.0  # and -0.0 becomes 0.0
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _chunks(rows: QuerySet, names: Container[str] | None = None):
    """The named scores of `rows`, CHUNK rows at a time, as {name: sorted values}; only
    those of `names`, when given."""
    chunk: dict[str, list[float]] = {}
    read = 0
    for scores in rows.values_list("scores", flat=True).iterator(chunk_size=CHUNK):
        read += 1
        if isinstance(scores, dict):
            for name, value in scores.items():
                if names is None or name in names:
                    value = _as_score(value)
                    if value is not None:
                        chunk.setdefault(name, []).append(value)
        if read % CHUNK == 0 and chunk:
            yield {name: sorted(values) for name, values in chunk.items()}
            chunk = {}
    if chunk:
        yield {name: sorted(values) for name, values in chunk.items()}


class _Window:
    """The values of one named score whose keys start with the `bits` bits `prefix`, of
    which `below` values are smaller. A pass holds them, when they are few enough (and
    their `count` is known), else counts them by the next DIGIT bits of their keys: for
    a chunk's sorted values, one bisection per run of values sharing those bits."""

    def __init__(self, prefix: int, bits: int, below: int, count: int | None):
        self.prefix, self.bits, self.below = prefix, bits, below
        span = 64 - bits
        self.lowest = _value(prefix << span) if bits else -math.inf
        self.highest = _value(((prefix + 1) << span) - 1) if bits else math.inf
        self.held = array("d") if count is not None and count <= HELD else None
        self.counts = array("i", bytes(4 << DIGIT)) if self.held is None else None
        self.lo, self.hi = _ALL, 0  # the smallest and largest keys seen

    def add(self, values: list[float]) -> None:
        i = bisect_left(values, self.lowest)
        end = bisect_right(values, self.highest, i)
        if i == end:
            return
        if self.held is not None:
            self.held.extend(values[i:end])
            return
        self.lo, self.hi = min(self.lo, _key(values[i])), max(self.hi, _key(values[end - 1]))
        shift = 64 - self.bits - DIGIT
        while i < end:
            run = _key(values[i]) >> shift
            after = bisect_right(values, _value(((run + 1) << shift) - 1), i, end)
            after = max(after, i + 1)  # a run holds values[i] at least, whatever rounding
            self.counts[run & ((1 << DIGIT) - 1)] += after - i
            i = after

    def pick(self, k: int) -> float | tuple[int, int, int, int]:
        """After a pass: the value at rank k, or where it lies now known (the prefix,
        bits, below and count of a narrower window)."""
        rank = max(0, k - self.below)  # clamped: only rows changed meanwhile go past it
        if self.held is not None:
            held = sorted(self.held)
            return held[min(rank, len(held) - 1)] if held else math.nan
        if self.lo >= self.hi:  # one value (or none, if the rows changed meanwhile)
            return _value(self.lo) if self.lo == self.hi else math.nan
        reached = list(accumulate(self.counts))
        digit = min(bisect_right(reached, rank), len(reached) - 1)
        count = self.counts[digit]
        below = self.below + reached[digit] - count
        return (self.prefix << DIGIT) | digit, self.bits + DIGIT, below, count


class _Named:
    """One named score's running numbers, and where its median's one or two ranks lie."""

    def __init__(self):
        self.n, self.total, self.lo, self.hi = 0, 0.0, math.inf, -math.inf
        self.edges: list[float] = []
        self.bins: list[int] = []
        self.found: dict[int, float] = {}
        self.windows: dict[int, _Window] = {-1: _Window(0, 0, 0, None)}  # by rank

    def add(self, values: list[float]) -> None:
        self.n += len(values)
        self.total += math.fsum(values)
        self.lo, self.hi = min(self.lo, values[0]), max(self.hi, values[-1])
        self.windows[-1].add(values)

    def start_bins(self) -> None:
        self.edges = _edges(self.lo, self.hi)
        self.bins = [0] * (len(self.edges) - 1)
        first = self.windows.pop(-1)
        ranks = [self.n // 2] if self.n % 2 else [self.n // 2 - 1, self.n // 2]
        if self.lo == self.hi:
            self.found = {k: self.lo for k in ranks}
        else:
            self.windows = {k: first for k in ranks}
            self.narrow()

    def add_to_bins(self, values: list[float]) -> None:
        # Bin i holds [edge i, edge i + 1): the values from the first not below edge i.
        starts = [0] + [bisect_left(values, edge) for edge in self.edges[1:-1]] + [len(values)]
        for i in range(len(self.bins)):
            self.bins[i] += starts[i + 1] - starts[i]

    def narrow(self) -> None:
        """After a pass: the ranks found, and a narrower window for each of the others (one
        for both when they lie in the same)."""
        narrower: dict[tuple, _Window] = {}
        for k, window in list(self.windows.items()):
            place = window.pick(k)
            if isinstance(place, float) or place[1] >= 64:  # every bit of the key known
                self.found[k] = place if isinstance(place, float) else _value(place[0])
                del self.windows[k]
            else:
                if place not in narrower:
                    narrower[place] = _Window(*place)
                self.windows[k] = narrower[place]

    def stats(self) -> dict:
        middle = sorted(self.found)
        a, b = self.found[middle[0]], self.found[middle[-1]]
        median = a if len(middle) == 1 else (a + b) / 2
        return _stats(
            self.n,
            self.total / self.n,
            median if math.isfinite(median) else None,
            self.lo,
            self.hi,
            _bins(self.edges, self.bins),
        )


def _named_stats(rows: QuerySet) -> dict:
    """Stats of each named score. The first pass counts, sums, finds min and max, and
    counts the values by the top DIGIT bits of their keys; the second fills the bins and
    usually finds the median among the values it held, those sharing the median's top
    bits; a further pass only while too many do (four passes at most: 64 bits a key)."""
    named: dict[str, _Named] = {}
    for chunk in _chunks(rows):
        for name, values in chunk.items():
            score = named.get(name)
            if score is None:
                if len(named) >= NAMES:
                    continue
                score = named[name] = _Named()
            score.add(values)
    for score in named.values():
        score.start_bins()
    first = True
    while True:
        looking = {name: score for name, score in named.items() if score.windows}
        if not (first or looking):
            break
        windows = {name: set(score.windows.values()) for name, score in looking.items()}
        for chunk in _chunks(rows, named if first else looking):
            for name, values in chunk.items():
                if first:
                    named[name].add_to_bins(values)
                for window in windows.get(name, ()):
                    window.add(values)
        for score in looking.values():
            score.narrow()
        first = False
    return {name: named[name].stats() for name in sorted(named)}


# Failures and feedback ----------------------------------------------------------------


def _failures(cases: QuerySet) -> list[dict]:
    groups = (
        cases.exclude(status="valid")
        .values("problem", "exception_type", "status")
        .annotate(count=Count("pk"), first=Min("index"))
        .order_by("-count", "first")[:FAILURE_GROUPS]
    )
    return [
        {
            "code": group["problem"],
            "exception_type": group["exception_type"],
            "status": group["status"],
            "count": group["count"],
            "examples": _indexes(
                cases.filter(
                    problem=group["problem"],
                    exception_type=group["exception_type"],
                    status=group["status"],
                ).order_by("index"),
                EXAMPLES,
            ),
        }
        for group in groups
    ]


def _repeated(count: int, outputs: int, scored: int, lo, hi, top: float | None) -> bool:
    """Whether a feedback given `count` times says too little: given to different outputs
    that scored differently, or that scored below the top score (the same words for two
    different wrong outputs tell the reflection model nothing of either). The same praise
    for outputs that all got the top score ("Correct.") is as it should be."""
    if outputs < 2:
        return False
    if top is None or scored < count or lo is None or hi is None:
        return True  # some of them have no valid score, so not all are at the top
    return hi - lo > SAME_SCORE or lo < top - SAME_SCORE


def _feedback(cases: QuerySet, scored: QuerySet, score: dict, totals: dict) -> dict:
    returned = totals["returned"]
    valid = Q(status="valid", score__isnull=False)
    # Feedbacks with words in them, grouped by digest (equal feedbacks, equal digests),
    # a chunk of groups at a time: the most frequent, and those repeated where they say
    # too little. Plain aggregates, so SQLite and PostgreSQL answer alike.
    groups = (
        cases.filter(feedback_kind__in=("generic", "specific"))
        .values("feedback_digest")
        .annotate(
            count=Count("pk"),
            first=Min("index"),
            outputs=Count("output_digest", distinct=True),
            scored=Count("pk", filter=valid),
            lo=Min("score", filter=valid),
            hi=Max("score", filter=valid),
        )
        .values_list("count", "first", "outputs", "scored", "lo", "hi")
        .order_by()
    )
    top: list[tuple[int, int]] = []  # (count, -first index): a heap of the most frequent
    repeated = 0
    for count, first, outputs, n_valid, lo, hi in groups.iterator(chunk_size=CHUNK):
        if _repeated(count, outputs, n_valid, lo, hi, score["max"]):
            repeated += count
        if len(top) < LISTED:
            heapq.heappush(top, (count, -first))
        else:
            heapq.heappushpop(top, (count, -first))
    top = sorted(((-count, -negative_first) for count, negative_first in top))
    texts = dict(
        cases.filter(index__in=[first for _, first in top])
        .annotate(text=Substr("feedback", 1, TEXT_CHARS))
        .values_list("index", "text")
    )
    quartile = _percentile(scored, "score", score["n"], 0.25)
    unhelpful = (
        scored.filter(score__lte=quartile, feedback_kind__in=UNHELPFUL_KINDS)
        if quartile is not None
        else scored.none()
    )
    return {
        "returned": returned,
        "empty_share": _share(totals["empty"], returned),
        "generic_share": _share(totals["generic"], returned),
        "repeated_share": _share(repeated, returned),
        "top": [{"text": texts.get(first, ""), "count": -negative} for negative, first in top],
        "unhelpful_low": _indexes(unhelpful.order_by("index"), LISTED),
        "unhelpful_low_count": unhelpful.count(),
    }


# Time, cost, and the second scoring ---------------------------------------------------


def _time(cases: QuerySet, totals: dict) -> dict:
    n = totals["cases"]
    return {
        "total_ms_mean": _number(totals["total_ms_mean"]),
        "total_ms_p50": _median(cases, "total_ms", n),
        "total_ms_p95": _percentile(cases, "total_ms", n, 0.95),
        "metric_ms_mean": _number(totals["metric_ms_mean"]),
        "run_ms_mean": _number(totals["run_ms_mean"]),
    }


def _cost(totals: dict) -> dict:
    n = totals["cases"]
    task_usd, metric_usd = totals["task_usd"] or 0.0, totals["metric_usd"] or 0.0
    return {
        "task_usd_total": task_usd,
        "metric_usd_total": metric_usd,
        "task_usd_per_case": task_usd / n if n else None,
        "metric_usd_per_case": metric_usd / n if n else None,
        "model_calls_total": totals["model_calls"] or 0,
        "feedback_length_mean": _number(totals["feedback_length_mean"]),
        "feedback_length_max": totals["feedback_length_max"],
    }


def _flaky(cases: QuerySet, totals: dict) -> dict:
    """Cases whose two scorings by the same metric differed (the worker's `differs`), of
    the cases scored twice."""
    return {
        "count": totals["differs"],
        "share": _share(totals["differs"], totals["scored_twice"]),
        "examples": _indexes(cases.filter(differs=True).order_by("index"), LISTED),
    }


def _noise(cases: QuerySet, evaluation: Evaluation, totals: dict) -> dict:
    """What scoring each case K times says of the metric's own noise (contract.noise),
    over the cases scored K times. Streamed: a case's status, score and later scorings'
    verdicts, CHUNK rows at a time, into arrays of K numbers a case."""
    scorings = noise.Scorings(k=max(2, evaluation.repeats or 2), capacity=totals["cases"])
    rows = cases.exclude(second_status="").values_list(
        "index", "status", "score", "repeats", "second_status", "second_score"
    )
    for index, status, score, repeats, second_status, second_score in rows.iterator(
        chunk_size=CHUNK
    ):
        if isinstance(repeats, list):
            others = [(r.get("status"), r.get("score")) for r in repeats if isinstance(r, dict)]
        else:  # written before cases kept their repeats: the second scoring is the one
            others = [(second_status, second_score)]
        scorings.add(index, [(status, score), *others])
    return scorings.noise()


def _agreement(cases: QuerySet) -> dict:
    """How often the two versions give the same verdict (same status and, when both are
    valid, the same score), and how their scores correlate where both are valid."""
    same = Case(
        When(
            Q(status=F("second_status"))
            & (
                ~Q(status="valid")
                | Q(LessThanOrEqual(Abs(F("score") - F("second_score")), SAME_SCORE))
            ),
            then=Value(True),
        ),
        default=Value(False),
        output_field=BooleanField(),
    )
    both = cases.exclude(second_status="")
    found = both.aggregate(n=Count("pk"), same=Count("pk", filter=same))
    # A changed verdict is a difference the worker marked, so the index on (evaluation,
    # differs, gap) finds them; a changed status has no gap and comes first.
    disagree = both.filter(~Q(same), differs=True).order_by(
        F("gap").desc(nulls_first=True), "index"
    )
    return {
        "n": found["n"],
        "same_verdict_share": _share(found["same"], found["n"]),
        "correlation": _correlation(
            cases.filter(status="valid", second_status="valid", score__isnull=False).exclude(
                second_score=None
            )
        ),
        "disagree": _indexes(disagree, LISTED),
    }


def _correlation(pairs: QuerySet) -> float | None:
    """Pearson's r of score and second_score: the means first, then the sums of the
    deviations' products, so large scores lose no precision to cancellation."""
    means = pairs.aggregate(n=Count("pk"), x=Avg("score"), y=Avg("second_score"))
    if means["n"] < 2:
        return None
    dx = F("score") - Value(float(means["x"]), output_field=FloatField())
    dy = F("second_score") - Value(float(means["y"]), output_field=FloatField())
    sums = pairs.aggregate(
        xy=Sum(dx * dy, output_field=FloatField()),
        xx=Sum(dx * dx, output_field=FloatField()),
        yy=Sum(dy * dy, output_field=FloatField()),
    )
    if not sums["xx"] or not sums["yy"]:
        return None
    return max(-1.0, min(1.0, sums["xy"] / math.sqrt(sums["xx"] * sums["yy"])))
