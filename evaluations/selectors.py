"""Reads of evaluations and their cases. Every view gets its evaluation through
get_evaluation_for_user, and no page reads every case: the results page reads the
summary and the few cases it names, the table one page, a download streams."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from evaluations.models import Evaluation, EvaluationCase
from evaluations.sweeps import as_the_sweep_will_leave_it
from jobs import notify
from jobs.sweeps import stale_before

PAGE_SIZE = 50
# The table's sorts, by their query value: every one is an index of EvaluationCase, and
# ties go by the case's place, so a page holds the same cases whenever it is read.
SORTS = {
    "index": (F("index").asc(),),
    "score": (F("score").asc(nulls_last=True), F("index").asc()),
    "total_ms": (F("total_ms").asc(), F("index").asc()),
    "gap": (F("gap").asc(nulls_last=True), F("index").asc()),
}
SORTS_DESC = {
    "index": (F("index").desc(),),
    "score": (F("score").desc(nulls_last=True), F("index").asc()),
    "total_ms": (F("total_ms").desc(), F("index").asc()),
    "gap": (F("gap").desc(nulls_last=True), F("index").asc()),
}
# What a list of cases shows of each: never the case itself or its detail (big JSON).
LISTED = (
    "evaluation_id",
    "index",
    "row",
    "file_row",
    "status",
    "problem",
    "exception_type",
    "params",
    "score",
    "feedback",
    "feedback_kind",
    "scores",
    "metric_ms",
    "run_ms",
    "total_ms",
    "task_usd",
    "metric_usd",
    "model_calls",
    "second",
    "second_status",
    "second_score",
    "differs",
    "gap",
    "repeats",
)


def _evaluations() -> QuerySet[Evaluation]:
    # The dataset's name only: its row holds the whole file and every parsed row.
    return Evaluation.objects.select_related("metric_version__metric", "second_version").annotate(
        dataset_name=F("dataset__filename")
    )


def get_evaluation_for_user(user: AbstractBaseUser, pk: int) -> Evaluation:
    """The user's evaluation, or 404: another user's evaluation does not exist for them."""
    return get_object_or_404(_evaluations(), pk=pk, owner=user)


# What the live panel and the results read of the row: a wait reads these again and
# again, never the metric's source or the artifact.
LIVE_FIELDS = (
    "status",
    "failure",
    "failure_params",
    "total",
    "done",
    "lost",
    "progress",
    "summary",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "waiting_since",
    "cancel_requested",
)


def wait_for_change(evaluation: Evaluation, since: str, seconds: float) -> Evaluation:
    """The evaluation, as the page shows it (a lost one as the next sweep will leave it),
    as soon as it differs from what the page showed (`since`, its live_token then) or is
    final, or as it is after `seconds`. The worker announces each write of the row
    (jobs.notify, kind "evaluation"), so the answer leaves the moment it changes."""
    deadline = time.monotonic() + seconds
    with notify.Waiter(evaluation.pk, notify.EVALUATION) as waiter:
        while True:
            # Subscribed before this read: a change right after it is not missed.
            try:
                evaluation.refresh_from_db(fields=LIVE_FIELDS)
            except ObjectDoesNotExist:  # deleted while its panel waited
                raise Http404 from None
            evaluation = as_the_sweep_will_leave_it(evaluation)
            left = deadline - time.monotonic()
            if evaluation.is_final or evaluation.live_token != since or left <= 0:
                return evaluation
            waiter.wait(left)


@dataclass(frozen=True)
class QueuePlace:
    """Where a queued evaluation stands: how many evaluations are ahead of it (running,
    or queued before it), and whose are running, the reason it waits."""

    ahead: int
    others_running: int
    own_running: int


def queue_place(evaluation: Evaluation) -> QueuePlace:
    """The place of a queued evaluation, in one query over the status indexes. Ahead of
    it: every evaluation running now (one lost with its worker is not), and every one
    the worker claims before it (execution.evaluation_claim: waiting longest first, a
    row from before `waiting_since` first of all, then by pk)."""
    running = Q(status=Evaluation.Status.RUNNING, heartbeat_at__gte=stale_before())
    since, pk = evaluation.waiting_since, evaluation.pk
    earlier = Q(waiting_since__isnull=True, pk__lt=pk)
    if since is not None:
        earlier = (
            Q(waiting_since__isnull=True)
            | Q(waiting_since__lt=since)
            | Q(waiting_since=since, pk__lt=pk)
        )
    before = Q(status=Evaluation.Status.QUEUED) & earlier
    mine = Q(owner_id=evaluation.owner_id)
    found = (
        Evaluation.objects.exclude(pk=pk)
        .filter(running | before)
        .aggregate(
            ahead=Count("pk"),
            others_running=Count("pk", filter=running & ~mine),
            own_running=Count("pk", filter=running & mine),
        )
    )
    return QueuePlace(**found)


def evaluations_for_user(user: AbstractBaseUser) -> QuerySet[Evaluation]:
    """The user's evaluations, newest first, without their texts and summaries."""
    return (
        _evaluations()
        .filter(owner=user)
        .defer("source", "second_source", "summary", "artifact", "roles", "selection")
        .order_by("-created_at", "-pk")
    )


def cases_at(evaluation: Evaluation, indexes: Iterable[int]) -> dict[int, EvaluationCase]:
    """The cases at `indexes` (the summary's examples), by index, in one query."""
    wanted = sorted({i for i in indexes if isinstance(i, int)})
    if not wanted:
        return {}
    rows = EvaluationCase.objects.filter(evaluation=evaluation, index__in=wanted).only(*LISTED)
    return {case.index: case for case in rows}


def get_case(evaluation: Evaluation, index: int) -> EvaluationCase:
    return get_object_or_404(EvaluationCase, evaluation=evaluation, index=index)


@dataclass(frozen=True)
class CaseFilters:
    """What the table shows: which cases, in which order. Every field already checked."""

    sort: str = "index"
    descending: bool = False
    invalid: bool = False
    low: float | None = None
    high: float | None = None
    problem: str = ""

    @property
    def any(self) -> bool:
        return self.invalid or self.low is not None or self.high is not None or bool(self.problem)


@dataclass(frozen=True)
class CasePage:
    cases: list[EvaluationCase]
    number: int
    pages: int
    count: int
    size: int = PAGE_SIZE  # cases a page

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def first_number(self) -> int:
        return (self.number - 1) * self.size + 1 if self.count else 0

    @property
    def last_number(self) -> int:
        return min(self.number * self.size, self.count)


def written_cases(evaluation: Evaluation) -> int:
    """How many case rows the evaluation has, known without counting them: the summary's
    count once it has one, else the worker's running count."""
    summary = evaluation.summary or {}
    cases = summary.get("cases")
    return cases if isinstance(cases, int) else evaluation.done


def case_page(
    evaluation: Evaluation, filters: CaseFilters, page: int, size: int = PAGE_SIZE
) -> CasePage:
    """One page of `size` of the evaluation's cases as `filters` picks and orders them;
    `page` is clamped to the pages there are. Unfiltered, the count comes from the evaluation
    row, not a COUNT over its cases; filtered, the database counts the matching rows
    along the filter's index."""
    rows = EvaluationCase.objects.filter(evaluation=evaluation)
    if filters.invalid:
        rows = rows.exclude(status="valid")
    if filters.low is not None:
        rows = rows.filter(score__gte=filters.low)
    if filters.high is not None:
        rows = rows.filter(score__lte=filters.high)
    if filters.problem:
        rows = rows.filter(problem=filters.problem)
    count = rows.count() if filters.any else written_cases(evaluation)
    pages = max(1, math.ceil(count / size))
    number = min(max(1, page), pages)
    order = (SORTS_DESC if filters.descending else SORTS)[filters.sort]
    start = (number - 1) * size
    shown = list(rows.only(*LISTED).order_by(*order)[start : start + size])
    return CasePage(cases=shown, number=number, pages=pages, count=count, size=size)


DOWNLOADED = (
    "index",
    "file_row",
    "status",
    "problem",
    "exception_type",
    "score",
    "feedback",
    "scores",
    "metric_ms",
    "run_ms",
    "total_ms",
    "task_usd",
    "metric_usd",
    "second_score",
    "differs",
)


def download_rows(evaluation: Evaluation) -> Iterator[dict]:
    """Every case of the evaluation as a dict of DOWNLOADED, in order, read from the
    database 2000 at a time: a download never holds every case."""
    rows = (
        EvaluationCase.objects.filter(evaluation=evaluation).order_by("index").values(*DOWNLOADED)
    )
    return rows.iterator(chunk_size=2000)
