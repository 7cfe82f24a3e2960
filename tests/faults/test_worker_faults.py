"""Faults with real processes: a worker killed with SIGKILL mid-check, and a Redis restart
that loses the queued messages. Nothing stays running or queued forever."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest

from checks.models import Check
from checks.services import check_create
from tests.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"
SLOW = (
    "import time\n\n\ndef score(input, output, expected=None):\n"
    "    time.sleep(120)\n    return 1.0, {'feedback': 'late'}\n"
)


def test_a_worker_killed_mid_check_leaves_a_failed_check_and_a_rerun_works(owner, workers):
    doomed = workers("doomed")
    check = check_create(owner=owner, source=SLOW, timeout_s=120)
    wait_for(lambda: Check.objects.get(pk=check.pk).status == Check.Status.RUNNING, 60)
    workers("survivor")
    os.killpg(doomed.pid, signal.SIGKILL)  # the worker and its pool process, at once
    killed_at = time.monotonic()
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, 60)
    check.refresh_from_db()
    assert check.status == Check.Status.FAILED
    assert check.failure == "worker_lost"
    # Bounded: stale after 4 s, swept every second, plus scheduling slack.
    assert time.monotonic() - killed_at < 30
    rerun = check_create(owner=owner, source=QUICK, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=rerun.pk).is_final, 60)
    assert Check.objects.get(pk=rerun.pk).status == Check.Status.PASSED


def test_checks_queued_through_a_redis_restart_are_not_lost(owner, workers, private_redis, broker):
    checks = [check_create(owner=owner, source=QUICK, timeout_s=20) for _ in range(3)]
    # No worker yet: the messages sit in Redis, and the restart (no persistence) drops them.
    private_redis["restart"]()
    workers("after-restart")
    for check in checks:
        wait_for(lambda pk=check.pk: Check.objects.get(pk=pk).is_final, 90)
    finished = Check.objects.filter(pk__in=[c.pk for c in checks])
    assert {c.status for c in finished} == {Check.Status.PASSED}
    assert all(c.started_at and c.finished_at for c in finished)


def test_a_check_whose_worker_is_gone_shows_as_lost_and_the_sweep_ends_it(
    owner, owner_client, settings
):
    """The page says so at once, and its live panel stops; the row is ended by a sweep,
    never by a page read."""
    from checks.sweeps import checks_reap_stale

    settings.CHECK_STALE_AFTER_S = 2
    check = Check.objects.create(owner=owner, source=QUICK, status=Check.Status.RUNNING)
    Check.objects.filter(pk=check.pk).update(heartbeat_at=check.created_at - timedelta(seconds=10))
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "The worker running this check was lost. Run the check again." in body
    panel = owner_client.get(f"/en/checks/{check.pk}/?partial=panel", HTTP_HX_REQUEST="true")
    assert panel.status_code == 286  # final: htmx stops asking
    check.refresh_from_db()
    assert check.status == Check.Status.RUNNING  # the reads wrote nothing
    assert checks_reap_stale() == 1
    check.refresh_from_db()
    assert check.status == Check.Status.FAILED and check.failure == "worker_lost"


def test_a_review_that_never_finished_is_ended(owner, settings):
    from checks.models import FeedbackReview
    from checks.sweeps import reviews_reap_stale

    settings.MODEL_TIMEOUT_S = 1
    check = Check.objects.create(owner=owner, source=QUICK, status=Check.Status.PASSED)
    stuck = FeedbackReview.objects.create(contract_check=check, case_index=0, model="m")
    fresh = FeedbackReview.objects.create(contract_check=check, case_index=1, model="m")
    FeedbackReview.objects.filter(pk=stuck.pk).update(
        created_at=stuck.created_at - timedelta(minutes=5)
    )
    assert reviews_reap_stale() == 1
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert (stuck.status, stuck.error_code) == ("failed", "timeout")
    assert fresh.status == "queued"
