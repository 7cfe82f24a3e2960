"""Starting checks and reviews: the web side's writes. The worker's half (running them)
is checks.execution, which only the tasks import; the sweeps are jobs.sweeps."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone

from checks.models import Check, FeedbackReview
from contract.artifacts import Artifact
from jobs import limits, notify, queue

# The worker's tasks (checks.tasks), sent by name: the tasks call the execution, and
# nothing here imports them back.
RUN_CHECK_TASK = "checks.run_check"
RUN_REVIEW_TASK = "checks.review_feedback"


class CheckRefused(Exception):
    """A check the user may not start now; `code` says why (rate_limited, too_many_active)."""

    def __init__(self, code: str, limit: int) -> None:
        super().__init__(code)
        self.code = code
        self.limit = limit


def check_admit(owner: AbstractBaseUser) -> None:
    """Raise CheckRefused when `owner` may not start a check now (it takes one from the
    user's check allowance when it may)."""
    active = Check.objects.filter(
        owner=owner, status__in=(Check.Status.QUEUED, Check.Status.RUNNING)
    ).count()
    if active >= settings.CHECK_MAX_ACTIVE_PER_USER:
        raise CheckRefused("too_many_active", settings.CHECK_MAX_ACTIVE_PER_USER)
    if not limits.take(owner, limits.CHECK, per_minute=settings.CHECK_RATE_PER_MINUTE):
        raise CheckRefused("rate_limited", settings.CHECK_RATE_PER_MINUTE)


def check_create(
    *,
    owner: AbstractBaseUser,
    source: str,
    cases: list[dict] | None = None,
    timeout_s: int | None = None,
    metric_version: models.Model | None = None,  # a metrics.MetricVersion
    reflection_model: str = "",
    metric_model: str = "",
    artifact: Artifact | None = None,
    task_model: str = "",
    files: dict[str, str] | None = None,
) -> Check:
    """Create a queued check and hand it to the worker once the row is committed.
    `files`: metric.py's helper modules ({path: text}, held to contract.files' limits).

    Enqueueing on commit means a worker can never pick up an id whose row it cannot
    see yet, and a rolled-back request enqueues nothing.
    """
    check = Check.objects.create(
        owner=owner,
        source=source,
        files=files or None,
        cases=cases,
        timeout_s=timeout_s or settings.CHECK_TIMEOUT_DEFAULT,
        metric_version=metric_version,
        reflection_model=reflection_model,
        metric_model=metric_model,
        artifact=artifact.to_dict() if artifact is not None else None,
        task_model=task_model,
        enqueued_at=timezone.now(),
    )
    # robust: with the broker down the request still succeeds; the row stays queued
    # and checks_requeue_lost() sends it once the broker is back.
    transaction.on_commit(lambda: queue.enqueue(RUN_CHECK_TASK, check.pk), robust=True)
    return check


def check_cancel(check: Check) -> bool:
    """Stop a check the user no longer wants: a queued one ends now, as failed with
    "cancelled" (the worker's claim then finds nothing to run); a running one is marked,
    and the worker running it kills its sandbox within a second. False when it was
    already final."""
    ended = Check.objects.filter(pk=check.pk, status=Check.Status.QUEUED).update(
        status=Check.Status.FAILED, failure="cancelled", finished_at=timezone.now()
    )
    if not ended:
        ended = Check.objects.filter(pk=check.pk, status=Check.Status.RUNNING).update(
            cancel_requested=True
        )
    if ended:
        transaction.on_commit(lambda: notify.check_changed(check.pk), robust=True)
    return bool(ended)


class ReviewRefused(Exception):
    """A review that cannot be asked for; `code`: no_reflection_model, not_reviewable."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@transaction.atomic
def review_request(check: Check, case_index: int, *, language: str = "en") -> FeedbackReview:
    """Queue the reflection model's review of one case's feedback."""
    model = check.reflection_model or (
        check.metric_version.metric.reflection_model if check.metric_version else ""
    )
    if not model:
        raise ReviewRefused("no_reflection_model")
    cases = (check.result or {}).get("cases", [])
    if not check.is_final or case_index >= len(cases) or cases[case_index].get("feedback") is None:
        raise ReviewRefused("not_reviewable")
    if not limits.take(check.owner, limits.REVIEW, per_minute=settings.REVIEW_RATE_PER_MINUTE):
        raise CheckRefused("reviews_rate_limited", settings.REVIEW_RATE_PER_MINUTE)
    review = FeedbackReview.objects.create(
        contract_check=check, case_index=case_index, model=model, language=language
    )
    transaction.on_commit(lambda: queue.enqueue(RUN_REVIEW_TASK, review.pk), robust=True)
    return review
