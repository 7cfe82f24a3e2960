"""The sweeps for evaluations, run by every worker with the checks' (checks.maintenance):
end an evaluation whose worker stopped beating, send again one whose message was lost."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from evaluations.models import Evaluation
from evaluations.services import RUN_EVALUATION_TASK, enqueue
from evaluations.summary import summarize

logger = logging.getLogger(__name__)


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.CHECK_STALE_AFTER_S)


def is_lost(evaluation: Evaluation) -> bool:
    """Whether the next sweep will end this running evaluation: its worker stopped beating."""
    return (
        evaluation.status == Evaluation.Status.RUNNING
        and evaluation.heartbeat_at is not None
        and evaluation.heartbeat_at < _stale_before()
    )


def as_the_sweep_will_leave_it(evaluation: Evaluation) -> Evaluation:
    """For display: a lost evaluation as failed with "worker_lost", as the next sweep will
    write it. Nothing is saved: a page read never writes."""
    if is_lost(evaluation):
        evaluation.status, evaluation.failure = Evaluation.Status.FAILED, "worker_lost"
    return evaluation


def reap_stale(*, pk: int | None = None) -> int:
    """End running evaluations whose worker stopped beating, keeping the cases written."""
    stale = Evaluation.objects.filter(
        status=Evaluation.Status.RUNNING, heartbeat_at__lt=_stale_before()
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
            pk=evaluation_id, status=Evaluation.Status.RUNNING, heartbeat_at__lt=_stale_before()
        ).update(
            status=Evaluation.Status.FAILED,
            failure="worker_lost",
            finished_at=timezone.now(),
            summary=summary,
        )
    if reaped:
        logger.warning("%s running evaluation(s) lost their worker", reaped)
    return reaped


def requeue_lost() -> int:
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.CHECK_REQUEUE_AFTER_S)
    sent = 0
    waiting = Evaluation.objects.filter(status=Evaluation.Status.QUEUED, enqueued_at__lt=cutoff)
    for evaluation_id in waiting.values_list("pk", flat=True)[:100]:
        mine = Evaluation.objects.filter(
            pk=evaluation_id, status=Evaluation.Status.QUEUED, enqueued_at__lt=cutoff
        ).update(enqueued_at=now)
        if mine:
            enqueue(RUN_EVALUATION_TASK, evaluation_id)
            sent += 1
    if sent:
        logger.warning("re-sent %s queued evaluation(s) to the broker", sent)
    return sent


def sweep_once() -> None:
    reap_stale()
    requeue_lost()
