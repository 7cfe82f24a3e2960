"""The user stops a check: a queued one ends at once, a running one is stopped by the
worker running it (its sandbox killed), and a final one stays as it was."""

from __future__ import annotations

import pytest

from checks.execution import check_claim
from checks.models import Check
from checks.services import check_cancel, check_create
from jobs import heartbeats
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
LOOP = "def score(input, output, expected=None):\n    while True:\n        pass\n"


def test_a_queued_check_ends_at_once_and_no_worker_takes_it(owner):
    check = Check.objects.create(owner=owner, source=LOOP)
    assert check_cancel(check) is True
    check.refresh_from_db()
    assert (check.status, check.failure) == (Check.Status.FAILED, "cancelled")
    assert check.finished_at is not None
    assert check_claim(check.pk) is False


def test_a_running_check_is_marked_and_its_worker_told(owner):
    check = Check.objects.create(owner=owner, source=LOOP, status=Check.Status.RUNNING)
    told = []
    with heartbeats.beating(Check, check.pk, on_cancel=lambda: told.append(check.pk)):
        assert heartbeats.cancels_once() == []
        assert check_cancel(check) is True
        assert heartbeats.cancels_once() == [check.pk]
    assert told == [check.pk]
    check.refresh_from_db()
    assert check.status == Check.Status.RUNNING and check.cancel_requested


def test_a_final_check_is_left_as_it_was(owner):
    check = Check.objects.create(owner=owner, source=LOOP, status=Check.Status.PASSED)
    assert check_cancel(check) is False
    check.refresh_from_db()
    assert check.status == Check.Status.PASSED and not check.cancel_requested


def test_the_button_is_on_a_live_panel_only_and_answers_that_it_is_stopping(owner_client, owner):
    live = Check.objects.create(owner=owner, source=LOOP, status=Check.Status.RUNNING)
    done = Check.objects.create(owner=owner, source=LOOP, status=Check.Status.PASSED)
    assert (
        f"/en/checks/{live.pk}/cancel/"
        in owner_client.get(f"/en/checks/{live.pk}/").content.decode()
    )
    assert "/cancel/" not in owner_client.get(f"/en/checks/{done.pk}/").content.decode()
    answer = owner_client.post(f"/en/checks/{live.pk}/cancel/", **HTMX)
    assert answer.status_code == 200 and "Stopping the check" in answer.content.decode()
    plain = owner_client.post(f"/en/checks/{done.pk}/cancel/")
    assert plain.status_code == 302 and plain["Location"] == f"/en/checks/{done.pk}/"


def test_another_users_check_cannot_be_stopped(client, outsider, owner):
    check = Check.objects.create(owner=owner, source=LOOP, status=Check.Status.RUNNING)
    client.force_login(outsider)
    assert client.post(f"/en/checks/{check.pk}/cancel/").status_code == 404
    check.refresh_from_db()
    assert not check.cancel_requested


@pytest.mark.integration
def test_the_worker_stops_a_running_loop_long_before_its_time_limit(
    owner, owner_client, celery_worker_process
):
    check = check_create(owner=owner, source=LOOP, timeout_s=300)
    wait_for(lambda: Check.objects.get(pk=check.pk).status == Check.Status.RUNNING, 60)
    owner_client.post(f"/en/checks/{check.pk}/cancel/")
    # Far under the five minutes the cases would take to time out.
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, 60)
    check.refresh_from_db()
    assert (check.status, check.failure) == (Check.Status.FAILED, "cancelled")
    assert {case["problem"] for case in check.result["cases"]} == {"cancelled"}
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "You cancelled this check before it finished." in body
