"""No log line keeps an API token: a token sent in a query string is refused, and the dev
server's access log (the site `dev.py run` serves) records the request with the token
masked; so does every handler settings.LOGGING configures."""

from __future__ import annotations

import logging
import os
import socket
import sys
import urllib.error
import urllib.request

import pytest

from skynet_web.processes import Supervisor
from skynet_web.redaction import RedactSecrets, redact
from tests.conftest import ROOT, _database_url, wait_for

TOKEN = "skn_Zq8v3LmN0pR7sT2uW5xY9aB4cD6eF1gH"


def test_tokens_and_token_values_are_masked_and_the_rest_is_kept():
    line = f'"GET /api/v1/checks?limit=5&token={TOKEN}&x=1 HTTP/1.1" 401 52'
    assert redact(line) == '"GET /api/v1/checks?limit=5&token=[redacted]&x=1 HTTP/1.1" 401 52'
    assert redact(f"Bearer {TOKEN} refused") == "Bearer skn_[redacted] refused"
    assert (
        redact("/x?access_token=abc&api_key=def") == "/x?access_token=[redacted]&api_key=[redacted]"
    )
    assert redact("tokens=3 and no secret") == "tokens=3 and no secret"


def test_every_configured_handler_masks_what_its_records_carry(caplog):
    from django.conf import settings

    handlers = settings.LOGGING["handlers"]
    assert all("redact" in handler.get("filters", []) for handler in handlers.values())
    record = logging.LogRecord("api", logging.WARNING, __file__, 1, "refused %s", (TOKEN,), None)
    assert RedactSecrets().filter(record) and record.getMessage() == "refused skn_[redacted]"


@pytest.mark.django_db(transaction=True)
def test_the_dev_servers_access_log_masks_a_token_sent_in_the_query(tmp_path, redis_url):
    from django.db import connection

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "runserver.log"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "REDIS_URL": redis_url,
        "DJANGO_DEBUG": "1",
    }
    children = Supervisor(cwd=ROOT, env=env)
    argv = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    children.start("web", argv, log=log)
    try:

        def status(path: str) -> int | None:
            children.raise_if_exited()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                    return r.status
            except urllib.error.HTTPError as error:
                return error.code
            except OSError:
                return None

        wait_for(lambda: status("/healthz"), 60)
        assert status(f"/api/v1/me?token={TOKEN}") in (401, 422)  # refused, either way
        assert status(f"/en/?token={TOKEN[4:]}&lang=es") == 200
        written = wait_for(
            lambda: (text := log.read_text()).count("token=[redacted]") >= 2 and text
        )
    finally:
        children.stop(grace_s=5)
    assert TOKEN not in written and TOKEN[4:] not in written
    assert "GET /api/v1/me?token=[redacted] HTTP/1.1" in written
    assert "GET /en/?token=[redacted]&lang=es HTTP/1.1" in written
