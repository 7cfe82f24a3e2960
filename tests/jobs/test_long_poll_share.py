"""A live panel's request waits on the server only within its share (jobs.longpoll):
one over its user's share, or over its process's, is answered at once and its panel asks
again a little later; every turn taken is given back, whatever ends the wait."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from checks import views as check_views
from checks.models import Check
from evaluations import execution
from evaluations import views as evaluation_views
from evaluations.models import Evaluation
from jobs import longpoll, notify
from runs import selectors as run_selectors
from runs import views as run_views
from runs.models import Run
from tests.conftest import wait_for
from tests.evaluations.evaluation_data import LABEL_METRIC, make_dataset
from tests.runs.run_data import make_quiz_run

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"
# What a turned-away panel carries: it asks again, later.
ASK_AGAIN = f'delay:{longpoll.ASK_AGAIN_MS}ms"'


@pytest.fixture(autouse=True)
def _held(monkeypatch):
    """A wait ends when the test changes its row, long before it could run out of time."""
    for views in (check_views, evaluation_views, run_views):
        monkeypatch.setattr(views, "LONG_POLL_S", 60.0)


class Live(NamedTuple):
    """A live row's panel request, the token it asks with, and the row's end."""

    url: str
    since: str
    end: Callable[[], None]


def _check(owner) -> Live:
    check = Check.objects.create(owner=owner, source=QUICK)

    def end() -> None:
        Check.objects.filter(pk=check.pk).update(status=Check.Status.PASSED, result={})
        notify.check_changed(check.pk)

    since = check.live_token
    return Live(f"/en/checks/{check.pk}/?partial=panel&since={since}", since, end)


def _evaluation(owner) -> Live:
    now = timezone.now()
    evaluation = Evaluation.objects.create(
        owner=owner,
        dataset=make_dataset(owner, 2),
        source=LABEL_METRIC,
        status=Evaluation.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
    )
    since = evaluation.live_token
    return Live(
        f"/en/evaluations/{evaluation.pk}/?partial=live&since={since}",
        since,
        # As the worker ends it: the summary and the final status in one write, announced.
        lambda: execution._finish(evaluation.pk, evaluation.claim, status=Evaluation.Status.DONE),
    )


def _run(owner) -> Live:
    run = make_quiz_run(owner)

    def end() -> None:
        Run.objects.filter(pk=run.pk).update(status="cancelled", finished_at=timezone.now())
        notify.check_changed(run.pk, "run")

    since = run_selectors.live_token(run)
    return Live(f"/en/runs/{run.pk}/?partial=live&since={since}", since, end)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


class Tab(threading.Thread):
    """One browser tab's panel request, in a thread of its own as the server gives it."""

    def __init__(self, user, url: str) -> None:
        super().__init__(daemon=True)
        self.client = _client(user)
        self.url = url
        self.response = None
        self.error: Exception | None = None
        self.start()

    def run(self) -> None:
        try:
            self.response = self.client.get(self.url, **HTMX)
        except Exception as error:  # the view's own exception, as the test client raises it
            self.error = error
        finally:
            connection.close()


@pytest.mark.parametrize(
    "live_row", [_check, _evaluation, _run], ids=["check", "evaluation", "run"]
)
def test_a_long_poll_over_its_users_share_is_answered_at_once(live_row, owner, settings, announced):
    settings.LONG_POLLS_PER_USER = 2
    live = live_row(owner)
    tabs = [Tab(owner, live.url) for _ in range(2)]
    wait_for(lambda: longpoll.waiting(owner.pk) == 2)

    extra = _client(owner).get(live.url, **HTMX)

    # Answered while the user's two waits are still held: it did not wait for a turn.
    assert all(tab.is_alive() for tab in tabs) and longpoll.waiting(owner.pk) == 2
    body = extra.content.decode()
    assert extra.status_code == 200
    # The panel as it is, asking again later with the same token, not at once.
    assert ASK_AGAIN in body and f"since={live.since}" in body
    live.end()
    for tab in tabs:
        tab.join()
    # The two that waited were answered by the end, and their turns are back.
    assert [tab.response.status_code for tab in tabs] == [286, 286]
    assert longpoll.waiting() == 0


def test_a_process_keeps_its_other_threads_when_its_share_is_full(
    owner, outsider, settings, announced
):
    """The owner holds every turn the process gives: the outsider's panel is answered at
    once, their page at once, and neither takes a turn."""
    settings.LONG_POLLS_PER_PROCESS = 2
    settings.LONG_POLLS_PER_USER = 2
    mine = _check(owner)
    tabs = [Tab(owner, mine.url) for _ in range(2)]
    wait_for(lambda: longpoll.waiting() == 2)
    theirs = _check(outsider)
    client = _client(outsider)

    answer = client.get(theirs.url, **HTMX)
    page = client.get("/en/")

    assert answer.status_code == 200 and ASK_AGAIN in answer.content.decode()
    assert page.status_code == 200
    assert all(tab.is_alive() for tab in tabs) and longpoll.waiting(outsider.pk) == 0
    mine.end()
    for tab in tabs:
        tab.join()
    assert [tab.response.status_code for tab in tabs] == [286, 286]
    assert longpoll.waiting() == 0


def test_a_turn_is_given_back_when_the_wait_fails(owner, announced):
    """The check is deleted while its panel waits: the panel is answered 404, as any page
    of an object that is not there, and the turn still comes back."""
    check = Check.objects.create(owner=owner, source=QUICK)
    pk = check.pk
    tab = Tab(owner, f"/en/checks/{pk}/?partial=panel&since={check.live_token}")
    wait_for(lambda: longpoll.waiting(owner.pk) == 1)
    check.delete()
    notify.check_changed(pk)
    tab.join()
    assert tab.error is None and tab.response.status_code == 404
    assert longpoll.waiting() == 0


def test_a_client_that_hangs_up_gives_its_turn_back_when_its_wait_ends(
    owner, live_server, settings, announced
):
    """Nothing tells a waiting request that its client left; the turn comes back when the
    wait ends, and the answer goes nowhere."""
    live = _check(owner)
    session = _client(owner).cookies[settings.SESSION_COOKIE_NAME].value
    cookie = f"{settings.SESSION_COOKIE_NAME}={session}"
    address = urlsplit(live_server.url)
    hung_up = []
    for _ in range(2):
        conn = socket.create_connection((address.hostname, address.port))
        request = f"GET {live.url} HTTP/1.1\r\nHost: localhost\r\nHX-Request: true\r\n"
        conn.sendall(f"{request}Cookie: {cookie}\r\nConnection: close\r\n\r\n".encode())
        hung_up.append(conn)
    wait_for(lambda: longpoll.waiting(owner.pk) == 2)
    for conn in hung_up:
        conn.close()
    live.end()
    wait_for(lambda: longpoll.waiting() == 0)
