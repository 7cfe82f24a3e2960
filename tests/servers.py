"""The site under gunicorn, as README's production recipe serves it, for the tests that
need real processes and threads rather than Django's test client."""

from __future__ import annotations

import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from skynet_web.processes import Supervisor
from tests.conftest import ROOT, _database_url, wait_for


@contextmanager
def gunicorn(
    log: Path, redis_url: str, *, threads: int, app: str = "skynet_web.wsgi:application", **env
) -> Iterator[tuple[str, Supervisor]]:
    """(address, its supervisor) of one gunicorn process of `threads` threads on the test
    database and Redis, with `env` added to its environment; up once it answers."""
    from django.db import connection

    environment = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "skynet_web.settings",
        # Static files by their plain names: no collectstatic for a test.
        "DJANGO_DEBUG": "1",
        **env,
    }
    children = Supervisor(cwd=ROOT, env=environment)
    argv = [sys.executable, "-m", "gunicorn", app]
    argv += ["--workers", "1", "--worker-class", "gthread", "--threads", str(threads)]
    argv += ["--bind", "127.0.0.1:0", "--graceful-timeout", "5"]
    children.start("gunicorn", argv, log=log)
    try:

        def listening() -> str | None:
            children.raise_if_exited()
            found = re.search(r"Listening at: (http://127\.0\.0\.1:\d+)", log.read_text())
            return found and found.group(1)

        url = wait_for(listening)
        # Up once it answers: the first request in a fresh process loads the URLs.
        wait_for(lambda: _answers(url))
        yield url, children
    finally:
        children.stop(grace_s=10)


def _answers(url: str) -> bool:
    """Whether the site answers at all (/healthz may say a worker is missing: no matter)."""
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=5):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
