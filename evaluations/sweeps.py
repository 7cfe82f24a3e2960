"""The sweeps for evaluations, run by every worker with the checks' (jobs.sweeps):
end an evaluation whose worker stopped beating, send again one whose message was lost."""

from __future__ import annotations

import logging

from django.utils import timezone

from evaluations.models import Evaluation
from evaluations.services import RUN_EVALUATION_TASK
from evaluations.summary import summarize
from jobs import notify

# A lost evaluation is shown as the next sweep will leave it, as a lost check is.
from jobs.sweeps import as_the_sweep_will_leave_it, is_lost, requeue_lost, stale_before

__all__ = ["as_the_sweep_will_leave_it", "is_lost", "reap_stale", "sweep_once"]

logger = logging.getLogger(__name__)


def reap_stale(*, pk: int | None = None) -> int:
    """End running evaluations whose worker stopped beating, keeping the cases written."""
    stale = Evaluation.objects.filter(
        status=Evaluation.Status.RUNNING, heartbeat_at__lt=stale_before()
    )
    if pk is not None:
        stale = stale.filter(pk=pk)
    ids = list(stale.values_list("pk", flat=True)[:100])
    reaped = 0
    for evaluation_id in ids:
        # One at a time, each conditional, with its summary in the same write: a worker
        # that finished meanwhile wins, and no page sees it ended without one.
        summary = summarize(Evaluation.objects.get(pk=evaluation_id))
        reaped += Evaluation.objects.filter(
            pk=evaluation_id, status=Evaluation.Status.RUNNING, heartbeat_at__lt=stale_before()
        ).update(
            status=Evaluation.Status.FAILED,
            failure="worker_lost",
            finished_at=timezone.now(),
            summary=summary,
        )
        notify.check_changed(evaluation_id, notify.EVALUATION)
    if reaped:
        logger.warning("%s running evaluation(s) lost their worker", reaped)
    return reaped


def sweep_once() -> None:
    reap_stale()
    requeue_lost(Evaluation, RUN_EVALUATION_TASK)
