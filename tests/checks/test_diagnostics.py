"""The editor's diagnostics serve every user at once: one user's big source being parsed
holds up no other user's request (the parse takes no process-wide lock)."""

from __future__ import annotations

import ast
import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import get_resolver

from metrics import services as metric_services

pytestmark = pytest.mark.django_db(transaction=True)

# About the most diagnostics take (256 KB): its parse took a process-wide lock for a second.
BIG = "def score(input, output):\n    return 1.0, {}\n\nX = [" + ", ".join(["1"] * 80_000) + "]\n"
SMALL = "def score(a):\n    return 1\n"


def test_one_users_big_source_does_not_hold_up_anothers_diagnostics(owner, outsider, monkeypatch):
    # Each parse waits inside ast.parse until the other is there too: both get there
    # only if nothing lets one parse at a time. (A lock would leave the barrier broken.)
    both_parsing = threading.Barrier(2, timeout=30)
    threads: list[threading.Thread] = []
    parse = ast.parse

    def meeting(text, *args, **kwargs):
        if threading.current_thread() in threads:
            both_parsing.wait()
        return parse(text, *args, **kwargs)

    urls = {}
    for user in (owner, outsider):
        metric = metric_services.metric_create(owner=user, name="m", starter="exact_match")
        urls[user.username] = f"/en/metrics/{metric.pk}/diagnostics/"
    # The URLs loaded first: importing them builds the API's schemas, whose signatures
    # inspect reads with ast.parse, under the import lock the other request then waits on.
    get_resolver().url_patterns  # noqa: B018
    monkeypatch.setattr(ast, "parse", meeting)
    answers: dict[str, object] = {}

    def post(user, source) -> None:
        try:
            client = Client()
            client.force_login(user)
            response = client.post(urls[user.username], {"source": source})
            answers[user.username] = response.json()["diagnostics"]
        except Exception as exc:  # the barrier broken, say: the assertion below tells
            answers[user.username] = exc
        finally:
            connection.close()

    threads.extend(
        [
            threading.Thread(target=post, args=(owner, BIG)),
            threading.Thread(target=post, args=(outsider, SMALL)),
        ]
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers["alice"] == []
    assert [d["code"] for d in answers["bob"]] == ["bad_signature"]  # type: ignore[union-attr]
