"""The sweeps every worker runs (jobs.worker, every SWEEP_EVERY_S): each app registers its
own from its AppConfig.ready (checks, evaluations, runs), so this module imports none of
them. What they share is here: when a running row counts as lost with its worker, how a
page shows it before the sweep ends it, and sending again the rows whose message was lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from jobs import queue
from jobs.models import WorkerRow

logger = logging.getLogger(__name__)

_sweeps: list[Callable[[], object]] = []


def register(sweep: Callable[[], object]) -> None:
    """Run `sweep` in every worker's sweep, once however often its app registers it."""
    if sweep not in _sweeps:
        _sweeps.append(sweep)


def sweep_once() -> None:
    for sweep in _sweeps:
        sweep()


def stale_before():
    """A running row whose heartbeat is older than this was lost with its worker."""
    return timezone.now() - timedelta(seconds=settings.CHECK_STALE_AFTER_S)


def is_lost(row: WorkerRow) -> bool:
    """Whether the next sweep will end this running row (a check, an evaluation): its
    worker stopped beating."""
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
            queue.enqueue(task, pk)
            sent += 1
    if sent:
        logger.warning("re-sent %s queued %s(s) to the broker", sent, model._meta.verbose_name)
    return sent
