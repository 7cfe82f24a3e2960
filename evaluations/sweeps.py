"""The sweeps for evaluations, run by every worker with the checks' (jobs.sweeps).

An evaluation whose worker stopped beating is not ended: it goes back in line, and the
next worker to claim it resumes at the cases not written (its row keeps which), as a run
goes on from its checkpoint. One lost EVALUATION_MAX_ATTEMPTS times fails
("worker_lost"), keeping its cases: something in it keeps taking its workers down. A
queued evaluation whose message was lost is sent again.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from evaluations.models import Evaluation
from evaluations.services import RUN_EVALUATION_TASK
from evaluations.summary import summarize
from jobs import notify, queue
from jobs.sweeps import is_lost, requeue_lost, stale_before

__all__ = ["as_the_sweep_will_leave_it", "is_lost", "reap_stale", "sweep_once"]

logger = logging.getLogger(__name__)


def as_the_sweep_will_leave_it(evaluation: Evaluation) -> Evaluation:
    """For display: a lost evaluation as the next sweep will leave it (back in line, or
    failed when out of attempts). Nothing is saved: a page read never writes."""
    if is_lost(evaluation):
        if evaluation.lost + 1 >= settings.EVALUATION_MAX_ATTEMPTS:
            evaluation.status, evaluation.failure = Evaluation.Status.FAILED, "worker_lost"
        else:
            evaluation.status = Evaluation.Status.QUEUED
            evaluation.lost += 1
    return evaluation


def reap_stale(*, pk: int | None = None) -> int:
    """Put running evaluations whose worker stopped beating back in line (or end the ones
    out of attempts, keeping the cases written); how many were handled."""
    stale = Evaluation.objects.filter(
        status=Evaluation.Status.RUNNING, heartbeat_at__lt=stale_before()
    )
    if pk is not None:
        stale = stale.filter(pk=pk)
    handled = 0
    for evaluation_id, lost in stale.values_list("pk", "lost")[:100]:
        # One at a time, each conditional on the row as this sweep saw it: a worker that
        # beat or finished meanwhile keeps it, and one sweeper handles it.
        mine = Evaluation.objects.filter(
            pk=evaluation_id,
            status=Evaluation.Status.RUNNING,
            heartbeat_at__lt=stale_before(),
            lost=lost,
        )
        now = timezone.now()
        if lost + 1 >= settings.EVALUATION_MAX_ATTEMPTS:
            summary = summarize(Evaluation.objects.get(pk=evaluation_id))
            done = mine.update(
                status=Evaluation.Status.FAILED,
                failure="worker_lost",
                finished_at=now,
                summary=summary,
                lost=F("lost") + 1,
            )
            if done:
                logger.warning("evaluation %s lost its worker %s times", evaluation_id, lost + 1)
        else:
            done = mine.update(
                status=Evaluation.Status.QUEUED,
                waiting_since=now,
                enqueued_at=now,
                worker="",
                lost=F("lost") + 1,
            )
            if done:
                logger.warning("evaluation %s lost its worker; back in line", evaluation_id)
                queue.enqueue(RUN_EVALUATION_TASK, evaluation_id)
        if done:
            handled += 1
            notify.check_changed(evaluation_id, notify.EVALUATION)
    return handled


def sweep_once() -> None:
    reap_stale()
    requeue_lost(Evaluation, RUN_EVALUATION_TASK)
