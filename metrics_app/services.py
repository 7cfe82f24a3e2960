"""Writes. Business logic lives here, not in views, forms or tasks."""

from __future__ import annotations

import logging
import socket

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from metrics_app.models import Check, MetricVersion

logger = logging.getLogger(__name__)


def check_create(
    *,
    owner: AbstractBaseUser,
    source: str,
    cases: list[dict] | None = None,
    timeout_s: int | None = None,
    metric_version: MetricVersion | None = None,
    language: str = "en",
) -> Check:
    """Create a queued check and hand it to the worker once the row is committed.

    Enqueueing on commit means a worker can never pick up an id whose row it cannot
    see yet, and a rolled-back request enqueues nothing.
    """
    from metrics_app.tasks import run_check_task

    check = Check.objects.create(
        owner=owner,
        source=source,
        cases=cases,
        timeout_s=timeout_s or settings.CHECK_TIMEOUT_DEFAULT,
        metric_version=metric_version,
        language=language,
    )
    transaction.on_commit(lambda: run_check_task.delay(check.pk))
    return check


def check_claim(check_id: int) -> bool:
    """Move a check from queued to running. Exactly one caller can win.

    A redelivered message (acks_late) finds the row no longer queued and does nothing.
    """
    now = timezone.now()
    claimed = Check.objects.filter(pk=check_id, status=Check.Status.QUEUED).update(
        status=Check.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=f"{socket.gethostname()}",
    )
    return claimed == 1


def check_execute(check_id: int) -> None:
    """Run a claimed check through the contract check engine and store the result."""
    from contract.cases import case_from_dict
    from contract.engine import run_check

    if not check_claim(check_id):
        logger.info("check %s is not queued; ignoring a duplicate delivery", check_id)
        return
    check = Check.objects.get(pk=check_id)
    cases = [case_from_dict(item) for item in check.cases] if check.cases else None

    def save_progress(partial) -> None:
        Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
            result=partial.to_dict(), heartbeat_at=timezone.now()
        )

    try:
        result = run_check(
            check.source, cases, timeout_s=check.timeout_s, on_progress=save_progress
        )
    except BaseException as exc:
        # Whatever stopped the check (a bug, Celery's soft time limit, a shutdown), the
        # row must not stay "running": record why, then let the exception go on.
        failure = (
            "time_limit" if type(exc).__name__ == "SoftTimeLimitExceeded" else "internal_error"
        )
        logger.exception("check %s stopped: %s", check_id, failure)
        check_finish_failed(check_id, failure)
        raise
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.PASSED if result.passed else Check.Status.FAILED,
        result=result.to_dict(),
        finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )


def check_finish_failed(check_id: int, failure: str) -> None:
    """End a running check as failed, keeping whatever partial result it stored."""
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.FAILED, failure=failure, finished_at=timezone.now()
    )
