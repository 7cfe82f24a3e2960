"""The live check panel hears of a change at once: its request waits on the server until
the worker announces a write of the check's row, and falls back to reading the row when
Redis cannot be reached."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.db import connection

from checks import services as check_services
from checks import views
from checks.models import Check
from jobs import notify
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"


def _later(seconds: float, action) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        try:
            action()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


PANEL_URL = re.compile(r'hx-get="([^"]+)" hx-trigger="load"')


def test_the_panel_follows_the_check_to_its_verdict_with_a_few_requests(
    owner_client, owner, celery_worker_process
):
    """As the page does: each answer is the panel as it changed (queued, running, final),
    and it names the next request; there is no timer in between."""
    check = check_services.check_create(owner=owner, source=QUICK, timeout_s=20)
    url = f"/en/checks/{check.pk}/?partial=panel&since={check.live_token}"
    seen = []
    for _ in range(5):
        response = owner_client.get(url, **HTMX)
        seen.append(response.status_code)
        if response.status_code == 286:
            break
        found = PANEL_URL.search(response.content.decode())
        assert found, response.content.decode()[:500]
        url = found.group(1).replace("&amp;", "&")
    assert seen[-1] == 286, seen
    assert "Contract check passed" in response.content.decode()
    assert Check.objects.get(pk=check.pk).status == Check.Status.PASSED


def test_a_change_announced_by_the_worker_wakes_the_waiting_request(
    owner_client, owner, monkeypatch, broker
):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    check = Check.objects.create(owner=owner, source=QUICK)

    def finish() -> None:
        Check.objects.filter(pk=check.pk).update(status=Check.Status.PASSED, result={})
        notify.check_changed(check.pk)

    thread = _later(0.3, finish)
    started = time.monotonic()
    response = owner_client.get(f"/en/checks/{check.pk}/?partial=panel&since=queued.0", **HTMX)
    waited = time.monotonic() - started
    thread.join()
    assert response.status_code == 286
    assert waited < 25, "the request waited for its time limit, not for the announcement"


def test_an_unchanged_check_is_answered_when_the_wait_is_over(owner_client, owner, monkeypatch):
    monkeypatch.setattr(views, "LONG_POLL_S", 0.2)
    check = Check.objects.create(owner=owner, source=QUICK)
    response = owner_client.get(f"/en/checks/{check.pk}/?partial=panel&since=queued.0", **HTMX)
    body = response.content.decode()
    assert response.status_code == 200
    # The same panel, which asks again with the same token.
    assert "since=queued.0" in body and "Contract check queued" in body


def test_without_redis_the_wait_reads_the_row_instead(owner_client, owner, monkeypatch):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)

    def unreachable():
        raise OSError("no Redis here")

    monkeypatch.setattr(notify, "_redis", unreachable)
    check = Check.objects.create(owner=owner, source=QUICK)
    thread = _later(
        0.3,
        lambda: Check.objects.filter(pk=check.pk).update(status=Check.Status.FAILED, result={}),
    )
    response = owner_client.get(f"/en/checks/{check.pk}/?partial=panel&since=queued.0", **HTMX)
    thread.join()
    assert response.status_code == 286


def test_another_users_check_is_not_waited_on(client, outsider, owner):
    check = Check.objects.create(owner=owner, source=QUICK)
    client.force_login(outsider)
    response = client.get(f"/en/checks/{check.pk}/?partial=panel&since=queued.0", **HTMX)
    assert response.status_code == 404


def test_a_check_that_waited_long_falls_back_to_a_timer(owner_client, owner):
    check = Check.objects.create(owner=owner, source=QUICK)
    Check.objects.filter(pk=check.pk).update(created_at=check.created_at.replace(year=2020))
    body = owner_client.get(f"/en/checks/{check.pk}/?partial=panel", **HTMX).content.decode()
    assert "since=" not in body and 'hx-trigger="load delay:5000ms"' in body
    wait_for(lambda: True)


def test_only_the_playgrounds_panel_brings_the_history_table_along(owner_client, owner):
    """The final live update refreshes the playground's history out of band; a panel
    elsewhere (the wizard, the check's own page) has no such table to swap into."""
    from metrics.services import metric_create

    metric = metric_create(owner=owner, name="m", starter="exact_match")
    version = metric.latest_version
    check = Check.objects.create(
        owner=owner, source=QUICK, metric_version=version, status=Check.Status.PASSED
    )
    playground = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert 'id="history"' in playground
    live = Check.objects.create(owner=owner, source=QUICK, metric_version=version)
    page = owner_client.get(f"/en/metrics/{metric.pk}/?check={live.pk}").content.decode()
    assert "history=1" in PANEL_URL.search(page).group(1)
    oob = 'id="history" hx-swap-oob="true"'
    url = f"/en/checks/{check.pk}/?partial=panel"
    assert oob in owner_client.get(url + "&history=1", **HTMX).content.decode()
    assert oob not in owner_client.get(url, **HTMX).content.decode()
    assert "history=1" not in owner_client.get(f"/en/checks/{live.pk}/").content.decode()
