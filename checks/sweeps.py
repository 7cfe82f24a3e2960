"""The checks' sweeps, which every worker runs (registered by checks.apps with jobs.sweeps):
end checks whose worker died, send again the ones whose message was lost, and end reviews
that never finished."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from checks.models import Check, FeedbackReview
from checks.services import RUN_CHECK_TASK
from jobs.sweeps import requeue_lost, stale_before

logger = logging.getLogger(__name__)


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


def sweep_once() -> None:
    checks_reap_stale()
    checks_requeue_lost()
    reviews_reap_stale()
