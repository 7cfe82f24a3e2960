"""The sweeps for runs, run by every worker with the checks' (jobs.sweeps).

A run whose worker stopped beating is not ended, as a check is: it goes back to the
queue, and the next runs worker to claim it goes on from its checkpoint (the row keeps
gepa's state). A run lost RUN_MAX_ATTEMPTS times fails ("worker_lost"): something in it
keeps taking its workers down. A queued run whose message was lost is sent again.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import queue
from jobs.sweeps import is_lost, requeue_lost, stale_before
from runs.models import Run
from runs.services import RUN_OPTIMIZATION_TASK

__all__ = ["as_the_sweep_will_leave_it", "is_lost", "requeue_stale", "sweep_once"]

logger = logging.getLogger(__name__)


def as_the_sweep_will_leave_it(run: Run) -> Run:
    """For display: a lost run as the next sweep will leave it (queued again, or failed
    when it ran out of attempts). Nothing is saved."""
    if is_lost(run):
        if run.attempt >= settings.RUN_MAX_ATTEMPTS:
            run.status, run.failure = Run.Status.FAILED, "worker_lost"
        else:
            run.status = Run.Status.QUEUED
    return run


def requeue_stale(*, pk: int | None = None) -> int:
    """Queue again the running runs whose worker stopped beating (or fail the ones out of
    attempts); how many were queued again."""
    stale = Run.objects.filter(status=Run.Status.RUNNING, heartbeat_at__lt=stale_before())
    if pk is not None:
        stale = stale.filter(pk=pk)
    now = timezone.now()
    failed = stale.filter(attempt__gte=settings.RUN_MAX_ATTEMPTS).update(
        status=Run.Status.FAILED, failure="worker_lost", finished_at=now
    )
    if failed:
        logger.warning(
            "%s run(s) lost their worker %s times and failed", failed, settings.RUN_MAX_ATTEMPTS
        )
    requeued = 0
    for run_id in list(stale.values_list("pk", flat=True)[:100]):
        # Conditional on the row as this sweep saw it: one sweeper requeues it, and a
        # worker that beat meanwhile keeps it.
        mine = Run.objects.filter(
            pk=run_id,
            status=Run.Status.RUNNING,
            heartbeat_at__lt=stale_before(),
            attempt__lt=settings.RUN_MAX_ATTEMPTS,
        ).update(status=Run.Status.QUEUED, worker="", enqueued_at=now)
        if mine:
            requeued += 1
            transaction.on_commit(
                lambda run_id=run_id: queue.enqueue(RUN_OPTIMIZATION_TASK, run_id)
            )
    if requeued:
        logger.warning("%s run(s) lost their worker; queued again to resume", requeued)
    return requeued


def sweep_once() -> None:
    requeue_stale()
    requeue_lost(Run, RUN_OPTIMIZATION_TASK)
