"""The web side's writes to a run: cancel and resume. Submitting one is the wizard's
(submissions.services.run_submit, which sends RUN_OPTIMIZATION_TASK); the worker's half is
optimizations.execution, which only optimizations.tasks imports."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from checks.services import enqueue
from submissions.models import Run
from submissions.services import RUN_OPTIMIZATION_TASK

__all__ = ["RUN_OPTIMIZATION_TASK", "run_cancel", "run_resume"]


def run_cancel(run: Run) -> bool:
    """A queued or paused run ends now ("cancelled"), keeping what it found; a running one
    is marked, and its worker stops within a second. False when already final."""
    ended = Run.objects.filter(pk=run.pk, status__in=(Run.Status.QUEUED, Run.Status.PAUSED)).update(
        status=Run.Status.CANCELLED, finished_at=timezone.now(), checkpoint=None
    )
    if not ended:
        ended = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            cancel_requested=True
        )
    return bool(ended)


def run_resume(run: Run) -> bool:
    """Queue a paused run again: a worker goes on from its checkpoint. False unless paused."""
    now = timezone.now()
    resumed = Run.objects.filter(pk=run.pk, status=Run.Status.PAUSED).update(
        status=Run.Status.QUEUED, failure="", failure_params={}, enqueued_at=now
    )
    if resumed:
        transaction.on_commit(lambda: enqueue(RUN_OPTIMIZATION_TASK, run.pk))
    return bool(resumed)
