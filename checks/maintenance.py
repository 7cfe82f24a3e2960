"""The sweeps every worker runs: end checks whose worker died, send again the ones whose
message was lost, and end reviews that never finished."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from checks.models import Check, FeedbackReview, WorkerRow
from checks.services import RUN_CHECK_TASK, enqueue

logger = logging.getLogger(__name__)


def stale_before():
    """A running row whose heartbeat is older than this was lost with its worker."""
    return timezone.now() - timedelta(seconds=settings.CHECK_STALE_AFTER_S)


def is_lost(row: WorkerRow) -> bool:
    """Whether the next sweep will end this running check or evaluation: its worker
    stopped beating."""
    return (
        row.status == "running"
        and row.heartbeat_at is not None
        and row.heartbeat_at < stale_before()
    )


def as_the_sweep_will_leave_it(row: WorkerRow) -> WorkerRow:
    """For display: a lost row as failed with "worker_lost", as the next sweep of any
    worker will write it. Nothing is saved: a page read never writes."""
    if is_lost(row):
        row.status, row.failure = "failed", "worker_lost"
    return row


def checks_reap_stale(*, pk: int | None = None) -> int:
    """End running checks whose worker stopped beating as failed, "worker_lost"."""
    now = timezone.now()
    stale = Check.objects.filter(status=Check.Status.RUNNING, heartbeat_at__lt=stale_before())
    if pk is not None:
        stale = stale.filter(pk=pk)
    reaped = stale.update(status=Check.Status.FAILED, failure="worker_lost", finished_at=now)
    if reaped:
        logger.warning("%s running check(s) lost their worker", reaped)
    return reaped


def requeue_lost(model: type[WorkerRow], task: str) -> int:
    """Send again the rows of `model` (checks, evaluations) that stayed queued too long
    (their message was lost). Each is re-sent at most once per interval: the conditional
    update decides which sweeper sends it, and the worker's claim makes any duplicate a
    no-op.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.CHECK_REQUEUE_AFTER_S)
    sent = 0
    waiting = model.objects.filter(status="queued", enqueued_at__lt=cutoff)
    for pk in waiting.values_list("pk", flat=True)[:500]:
        mine = model.objects.filter(pk=pk, status="queued", enqueued_at__lt=cutoff).update(
            enqueued_at=now
        )
        if mine:
            enqueue(task, pk)
            sent += 1
    if sent:
        logger.warning("re-sent %s queued %s(s) to the broker", sent, model._meta.verbose_name)
    return sent


def checks_requeue_lost() -> int:
    return requeue_lost(Check, RUN_CHECK_TASK)


def reviews_reap_stale() -> int:
    """End reviews that never finished (a lost worker or message) so the page stops
    waiting; the user can ask again. A review is one model call, so a few times the model
    timeout is long past any real answer."""
    cutoff = timezone.now() - timedelta(seconds=4 * settings.MODEL_TIMEOUT_S + 60)
    return FeedbackReview.objects.filter(
        status__in=(FeedbackReview.Status.QUEUED, FeedbackReview.Status.RUNNING),
        created_at__lt=cutoff,
    ).update(status=FeedbackReview.Status.FAILED, error_code="timeout", error_message="")


# Sweeps of the apps above this one (an evaluation is reaped as a check is), registered
# by their AppConfig.ready so this module never imports them.
_more_sweeps: list = []


def register_sweep(sweep) -> None:
    if sweep not in _more_sweeps:
        _more_sweeps.append(sweep)


def sweep_once() -> None:
    checks_reap_stale()
    checks_requeue_lost()
    reviews_reap_stale()
    for sweep in _more_sweeps:
        sweep()
