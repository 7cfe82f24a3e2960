"""Starting and stopping evaluations: the web side's writes. The worker's half is
evaluations.execution, which only evaluations.tasks imports."""

from __future__ import annotations

import math

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone

from contract.artifacts import Artifact
from evaluations.models import Evaluation
from evaluations.summary import summarize
from jobs import limits, notify, queue

RUN_EVALUATION_TASK = "evaluations.run"
EVALUATION = "evaluation"  # the kind of the users' rate buckets (jobs.limits)


class EvaluationRefused(Exception):
    """An evaluation the user may not start now. `code`: too_many_active, rate_limited,
    no_cases, too_many_cases, over_budget; `params` say by how much."""

    def __init__(self, code: str, **params) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


def scorings_per_case(second: str, repeats: int = 2) -> int:
    """How many times an evaluation runs a metric on each case: once; twice to compare
    two versions; `repeats` times when each case is scored K times."""
    if second == Evaluation.Second.REPEAT:
        return max(2, repeats)
    return 2 if second == Evaluation.Second.COMPARE else 1


def scaled_limits(cases: int, scorings: int = 1) -> dict:
    """The model budget of an evaluation of `cases` cases, each scored `scorings` times:
    a check's per three scorings (a check scores three cases once), never more dollars
    than EVALUATION_MAX_MODEL_USD."""
    scale = max(1.0, cases * scorings / 3)
    return {
        "max_calls": math.ceil(settings.CHECK_MAX_MODEL_CALLS * scale),
        "max_tokens": math.ceil(settings.CHECK_MAX_MODEL_TOKENS * scale),
        "max_usd": min(settings.CHECK_MAX_MODEL_USD * scale, settings.EVALUATION_MAX_MODEL_USD),
    }


def projected_cost(cases: int, per_case_usd: float | None, scorings: int = 1) -> dict:
    """What admission projects: the cost of `cases` at the measured cost of one (None
    when nothing measured it: the projection says so rather than guess). `per_case_usd`
    is a case's with its `scorings` scorings, which also scale its budget."""
    return {
        "cases": cases,
        "per_case_usd": per_case_usd,
        "usd": None if per_case_usd is None else per_case_usd * cases,
        "max_usd": scaled_limits(cases, scorings)["max_usd"],
        "scorings": scorings,
    }


def evaluation_admit(
    owner: AbstractBaseUser, *, cases: int, per_case_usd: float | None, scorings: int = 1
) -> dict:
    """Raise EvaluationRefused when `owner` may not start this evaluation now; else the
    projection it was admitted with (and one token of the user's allowance is taken).
    `scorings`: how many times each case is scored (scorings_per_case)."""
    if cases <= 0:
        raise EvaluationRefused("no_cases")
    if cases > settings.EVALUATION_MAX_CASES:
        raise EvaluationRefused("too_many_cases", cases=cases, max=settings.EVALUATION_MAX_CASES)
    projection = projected_cost(cases, per_case_usd, scorings)
    if projection["usd"] is not None and projection["usd"] > projection["max_usd"]:
        raise EvaluationRefused(
            "over_budget",
            cases=cases,
            projected_usd=projection["usd"],
            per_case_usd=per_case_usd,
            max_usd=projection["max_usd"],
        )
    active = Evaluation.objects.filter(
        owner=owner, status__in=(Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)
    ).count()
    if active >= settings.EVALUATION_MAX_ACTIVE_PER_USER:
        raise EvaluationRefused("too_many_active", limit=settings.EVALUATION_MAX_ACTIVE_PER_USER)
    if not limits.take(owner, EVALUATION, per_minute=settings.EVALUATION_RATE_PER_MINUTE):
        raise EvaluationRefused("rate_limited", limit=settings.EVALUATION_RATE_PER_MINUTE)
    return projection


def evaluation_create(
    *,
    owner: AbstractBaseUser,
    dataset: models.Model,  # a submissions.Dataset
    selection: dict,
    roles: dict,
    total: int,
    source: str,
    column_types: dict | None = None,
    recorded_column: str = "",
    metric_version: models.Model | None = None,
    second: str = "",
    second_source: str = "",
    second_version: models.Model | None = None,
    artifact: Artifact | None = None,
    task_model: str = "",
    reflection_model: str = "",
    metric_model: str = "",
    timeout_s: int | None = None,
    draft: models.Model | None = None,
    projected: dict | None = None,
    human: dict | None = None,
    repeats: int = 2,
) -> Evaluation:
    """Create a queued evaluation of `total` cases and hand it to the worker once the
    row is committed (as checks.services.check_create does). `column_types`: the type
    each column's values reach the metric with; a column it does not name has its type
    as read. `repeats`: with `second` "repeat", how many times each case is scored in
    all (its budget scaled by it)."""
    if second == Evaluation.Second.REPEAT:
        second_source, second_version = source, metric_version
    now = timezone.now()
    evaluation = Evaluation.objects.create(
        owner=owner,
        draft=draft,
        metric_version=metric_version,
        source=source,
        second=second,
        second_source=second_source if second else "",
        second_version=second_version if second else None,
        dataset=dataset,
        roles=roles,
        column_types=column_types or {},
        recorded_column=recorded_column,
        human=human or {},
        selection=selection,
        timeout_s=timeout_s or settings.CHECK_TIMEOUT_DEFAULT,
        reflection_model=reflection_model,
        metric_model=metric_model,
        artifact=artifact.to_dict() if artifact is not None else None,
        task_model=task_model,
        total=total,
        projected=projected,
        repeats=repeats,
        limits=scaled_limits(total, scorings_per_case(second, repeats)),
        enqueued_at=now,
        waiting_since=now,
    )
    transaction.on_commit(lambda: queue.enqueue(RUN_EVALUATION_TASK, evaluation.pk), robust=True)
    return evaluation


def _cancel_queued(pk: int) -> int:
    """End a queued evaluation as cancelled; 1 when it was queued. One waiting for its
    next turn (evaluations.turns) has cases: it ends with their summary, as a running one
    would, the write conditional on the cases summarized being all there are (a turn
    that ran in between means summarizing again)."""
    for _ in range(3):
        waiting = (
            Evaluation.objects.filter(pk=pk, status=Evaluation.Status.QUEUED)
            .only("pk", "done", "total", "second")
            .first()
        )
        if waiting is None:
            return 0
        ended = Evaluation.objects.filter(
            pk=pk, status=Evaluation.Status.QUEUED, done=waiting.done
        ).update(
            status=Evaluation.Status.FAILED,
            failure="cancelled",
            finished_at=timezone.now(),
            summary=summarize(waiting) if waiting.done else None,
        )
        if ended:
            return ended
    return 0


def evaluation_cancel(evaluation: Evaluation) -> bool:
    """A queued evaluation ends now ("cancelled"), with the cases of its earlier turns if
    it had any; a running one is marked and its worker stops within a second, keeping
    the cases it finished. False when already final."""
    ended = _cancel_queued(evaluation.pk)
    if not ended:
        ended = Evaluation.objects.filter(
            pk=evaluation.pk, status=Evaluation.Status.RUNNING
        ).update(cancel_requested=True)
    if ended:
        # Another tab's live panel waits on the row: it shows the change at once.
        transaction.on_commit(
            lambda: notify.check_changed(evaluation.pk, notify.EVALUATION), robust=True
        )
    return bool(ended)
