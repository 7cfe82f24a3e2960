"""Convert under gunicorn, as the production recipe serves it: a hostile import of the
largest text the form takes is answered within the converter's limits, and the web
process that answered it does not keep the memory the conversion needed."""

from __future__ import annotations

import http.cookiejar
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from metrics.models import Conversion, Metric
from tests.conftest import wait_for
from tests.servers import gunicorn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

DSPY = """\
import dspy


def metric(example, prediction, trace=None):
    return dspy.Prediction(score=float(example.answer == prediction.answer), feedback="")
"""
FORM_LIMIT = 256 * 1024


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _worker_pid(master: int) -> int:
    """The one gunicorn worker: the master's child."""

    def found() -> int | None:
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                text = status.read_text()
            except OSError:
                continue
            if re.search(rf"^PPid:\s+{master}$", text, re.M):
                return int(status.parent.name)
        return None

    return wait_for(found)


class Browser:
    """A logged-in browser: its session cookie, and the CSRF token of the last form."""

    def __init__(self, site: str, user) -> None:
        self.site = site
        client = Client()
        client.force_login(user)
        jar = http.cookiejar.CookieJar()
        name = settings.SESSION_COOKIE_NAME
        jar.set_cookie(_cookie(name, client.cookies[name].value))
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def get(self, path: str) -> str:
        with self.opener.open(self.site + path, timeout=120) as response:
            return response.read().decode()

    def post_form(self, path: str, data: dict) -> str:
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(
            self.site + path, data=body, headers={"Referer": self.site + path}
        )
        # The bound is for a site that never answers (the test fails), not a measure.
        with self.opener.open(request, timeout=120) as response:
            return response.read().decode()


def _cookie(name: str, value: str) -> http.cookiejar.Cookie:
    return http.cookiejar.Cookie(
        0, name, value, None, False, "127.0.0.1", False, False, "/", True, False, None,
        True, None, None, {},
    )  # fmt: skip


@pytest.fixture
def site(django_db_setup, redis_url, tmp_path):
    with gunicorn(tmp_path / "gunicorn.log", redis_url, threads=4, SKYNET_CONVERT_SECONDS="3") as (
        url,
        children,
    ):
        yield url, _worker_pid(children.children[0].pid)


def test_the_largest_imports_are_answered_within_limits_and_leave_no_memory_held(
    site, owner, outsider
):
    url, worker = site
    hostile = Browser(url, owner)
    hostile.get("/en/metrics/new/import/")  # the process has loaded what a page needs
    before = _rss_mb(worker)

    # A metric followed by a table as long as the form allows: converted, table kept.
    table = "TABLE = [" + ", ".join(str(i % 1000) for i in range(FORM_LIMIT // 5)) + "]\n"
    data = (DSPY + "\n" + table)[: FORM_LIMIT - 2].rsplit(",", 1)[0] + "]\n"
    page = hostile.post_form(
        "/en/metrics/new/import/", {"name": "data", "source": data, "action": "review"}
    )
    assert 'id="create-imported"' in page
    assert "def score(input, output, expected=None):" in Conversion.objects.get().result["source"]

    # As long in code, which cannot be set aside: ended at its CPU limit, with the words.
    helpers, i = [], 0
    while sum(map(len, helpers)) < FORM_LIMIT - len(DSPY) - 200:
        helpers.append(f"def helper_{i}(a, b):\n    return b + a * {i}\n\n")
        i += 1
    code = DSPY + "".join(helpers)
    answers: list[str] = []
    sending = threading.Thread(
        target=lambda: answers.append(
            hostile.post_form(
                "/en/metrics/new/import/", {"name": "code", "source": code, "action": "review"}
            )
        )
    )
    sending.start()
    # Another user's page is served while it converts.
    assert "Signed in as bob" in Browser(url, outsider).get("/en/")
    sending.join()
    assert "limits: 3 s of CPU time or 1024 MB of memory" in answers[0]

    # The conversions ran in children: the web process did not grow by their size
    # (in its own process, the 256 KB table alone took more than 400 MB).
    assert _rss_mb(worker) - before < 100
    assert not Metric.objects.exists()
