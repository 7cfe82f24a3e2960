"""Under gunicorn's threads, as the production recipe serves the site: one user's live
panels cannot take every thread of a process, so another user's page is served while
they wait (jobs.longpoll)."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest
from django.test import Client

from checks.models import Check
from jobs import longpoll, notify
from tests.conftest import wait_for
from tests.servers import gunicorn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

THREADS = 4
PER_USER = 2
QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"
ASK_AGAIN = f'delay:{longpoll.ASK_AGAIN_MS}ms"'


@pytest.fixture(scope="module")
def site(django_db_setup, redis_url, tmp_path_factory):
    """gunicorn with one process of THREADS threads on the test database and Redis, which
    lets PER_USER requests of a user, THREADS - 1 in all, wait."""
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    limits = {
        "SKYNET_LONG_POLLS_PER_USER": str(PER_USER),
        "SKYNET_LONG_POLLS_PER_PROCESS": str(THREADS - 1),
    }
    with gunicorn(
        log, redis_url, threads=THREADS, app="tests.jobs.held_wsgi:application", **limits
    ) as (url, _):
        yield url


def _cookie(user) -> str:
    from django.conf import settings

    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}"


def _get(site: str, path: str, cookie: str, *, htmx: bool = True, quiet: bool = False):
    """(status, body) of a GET as a logged-in browser sends it; with `quiet`, None when
    the site does not answer yet."""
    headers = {"Cookie": cookie, **({"HX-Request": "true"} if htmx else {})}
    request = urllib.request.Request(site + path, headers=headers)
    try:
        # The bound is for a site that never answers (the test fails), not a measure.
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        if quiet:
            return None
        raise


class Tab(threading.Thread):
    """One browser tab's panel request."""

    def __init__(self, site: str, path: str, cookie: str) -> None:
        super().__init__(daemon=True)
        self.args = (site, path, cookie)
        self.answer: tuple[int, str] | None = None
        self.start()

    def run(self) -> None:
        self.answer = _get(*self.args)


def test_another_users_page_is_served_while_one_user_sends_more_long_polls_than_threads(
    site, owner, outsider, announced
):
    check = Check.objects.create(owner=owner, source=QUICK)
    url = f"/en/checks/{check.pk}/?partial=panel&since={check.live_token}"
    tabs = [Tab(site, url, _cookie(owner)) for _ in range(THREADS + 2)]
    # The owner's share waits; every other request is answered at once and asks again
    # later. Before the share, all THREADS threads waited and nothing was answered.
    wait_for(lambda: sum(tab.answer is not None for tab in tabs) == len(tabs) - PER_USER)
    waiting = [tab for tab in tabs if tab.answer is None]
    for tab in tabs:
        if tab.answer is not None:
            assert tab.answer[0] == 200 and ASK_AGAIN in tab.answer[1]

    status, page = _get(site, "/en/", _cookie(outsider), htmx=False)

    assert status == 200 and "Signed in as bob" in page
    # Served while the owner's share was still held.
    assert all(tab.answer is None for tab in waiting)
    Check.objects.filter(pk=check.pk).update(status=Check.Status.PASSED, result={})
    notify.check_changed(check.pk)
    for tab in waiting:
        tab.join()
        assert tab.answer[0] == 286
