"""The evaluation's live panel hears of a change at once: its request waits on the server
until the worker announces a write of the row (a chunk of cases, the end), for at most
views.LONG_POLL_S, and the answer to the end is the results themselves."""

from __future__ import annotations

import html
import re
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from evaluations import execution, views
from evaluations.models import Evaluation
from evaluations.selection import default_selection
from evaluations.services import evaluation_create
from jobs import notify
from tests.evaluations.evaluation_data import LABEL_METRIC, make_dataset

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
LIVE = re.compile(r'<section id="evaluation-live"[^>]*hx-get="([^"]+)" hx-trigger="([^"]+)"')


def _running(owner, **fields) -> Evaluation:
    now = timezone.now()
    values = {
        "dataset": make_dataset(owner, 10),
        "source": LABEL_METRIC,
        "status": Evaluation.Status.RUNNING,
        "total": 10,
        "done": 3,
        "started_at": now,
        "heartbeat_at": now,
    }
    values.update(fields)
    return Evaluation.objects.create(owner=owner, **values)


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


def _live_url(evaluation: Evaluation) -> str:
    return f"/en/evaluations/{evaluation.pk}/?partial=live&since={evaluation.live_token}"


def test_the_running_page_asks_to_be_answered_when_the_row_changes_not_on_a_timer(
    owner_client, owner
):
    evaluation = _running(owner)
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    url, trigger = LIVE.search(body).groups()
    assert html.unescape(url) == _live_url(evaluation)
    assert trigger == "load"
    # Without JavaScript the page still reloads itself.
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in body


def test_a_chunk_announced_by_the_worker_wakes_the_waiting_request(
    owner_client, owner, monkeypatch, announced
):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    evaluation = _running(owner)

    def chunk_written() -> None:
        Evaluation.objects.filter(pk=evaluation.pk).update(done=7, heartbeat_at=timezone.now())
        execution._changed(evaluation.pk)

    thread = _later(0.3, chunk_written)
    started = time.monotonic()
    response = owner_client.get(_live_url(evaluation), **HTMX)
    waited = time.monotonic() - started
    thread.join()
    body = response.content.decode()
    assert response.status_code == 200
    assert "7 of 10 cases scored" in body
    assert waited < 20, "the request waited for its time limit, not for the announcement"
    evaluation.refresh_from_db()
    # The answer asks again from what it shows now.
    assert html.unescape(LIVE.search(body).group(1)) == _live_url(evaluation)


def test_the_end_is_answered_at_once_with_the_results_in_place_of_the_panel(
    owner_client, owner, monkeypatch, announced
):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    evaluation = _running(owner, total=0, done=0)
    # As the worker ends it: the summary and the final status in one write, announced.
    thread = _later(0.3, lambda: execution._finish(evaluation.pk, 0, status=Evaluation.Status.DONE))
    started = time.monotonic()
    response = owner_client.get(_live_url(evaluation), **HTMX)
    waited = time.monotonic() - started
    thread.join()
    body = response.content.decode()
    assert waited < 20, "the request waited for its time limit, not for the end"
    # 286: htmx stops asking; what it swaps in is the results, not a reload.
    assert response.status_code == 286
    assert "HX-Refresh" not in response
    assert body.lstrip().startswith('<section id="evaluation-final"')
    # The verdict counts every case: an evaluation that scored none says so, not "done".
    assert "No case was scored." in body and "Download CSV" in body
    assert 'data-verdict="no_cases"' in body
    assert 'id="evaluation-live"' not in body and "<html" not in body


def test_an_unchanged_evaluation_is_answered_when_the_wait_is_over(
    owner_client, owner, monkeypatch
):
    monkeypatch.setattr(views, "LONG_POLL_S", 0.3)
    evaluation = _running(owner)
    started = time.monotonic()
    response = owner_client.get(_live_url(evaluation), **HTMX)
    waited = time.monotonic() - started
    body = response.content.decode()
    assert response.status_code == 200
    assert waited >= 0.3, "the request was not held"
    # The same panel, which asks again with the same token.
    assert html.unescape(LIVE.search(body).group(1)) == _live_url(evaluation)
    assert "3 of 10 cases scored" in body


def test_without_redis_the_wait_reads_the_row_instead(owner_client, owner, monkeypatch):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)

    def unreachable():
        raise OSError("no Redis here")

    monkeypatch.setattr(notify, "_redis", unreachable)
    evaluation = _running(owner)
    thread = _later(
        0.3,
        lambda: Evaluation.objects.filter(pk=evaluation.pk).update(
            status=Evaluation.Status.FAILED, failure="cancelled"
        ),
    )
    started = time.monotonic()
    response = owner_client.get(_live_url(evaluation), **HTMX)
    waited = time.monotonic() - started
    thread.join()
    assert response.status_code == 286 and waited < 20
    assert "You cancelled this evaluation before it finished." in response.content.decode()


def test_a_lost_evaluation_is_not_held(owner_client, owner, monkeypatch):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    evaluation = _running(owner, heartbeat_at=timezone.now() - timedelta(hours=1))
    started = time.monotonic()
    response = owner_client.get(
        f"/en/evaluations/{evaluation.pk}/?partial=live&since={evaluation.live_token}", **HTMX
    )
    assert time.monotonic() - started < 20
    # Read as the sweep will leave it: back in line, to go on from its cases written.
    assert response.status_code == 200
    assert "Its worker was lost 1 time" in response.content.decode()
    # Nothing written.
    assert Evaluation.objects.get(pk=evaluation.pk).status == Evaluation.Status.RUNNING


def test_a_cancel_asked_in_another_tab_wakes_the_waiting_request(
    owner_client, owner, monkeypatch, announced
):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    evaluation = _running(owner)
    thread = _later(0.3, lambda: owner_client.post(f"/en/evaluations/{evaluation.pk}/cancel/"))
    started = time.monotonic()
    response = owner_client.get(_live_url(evaluation), **HTMX)
    waited = time.monotonic() - started
    thread.join()
    assert waited < 20
    assert "Stopping the evaluation" in response.content.decode()


def test_the_page_follows_a_real_worker_to_the_results_without_a_timer(
    owner_client, owner, monkeypatch, announced, celery_worker_process
):
    """As the page does: each answer names the next request; the last one is the
    results. No answer waits for its time limit: the worker announces every write."""
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    # Long enough that the page is loaded while it runs (about a second in the worker).
    dataset = make_dataset(owner, 300)
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=300,
        source=LABEL_METRIC,
        timeout_s=10,
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    answers = []
    for _ in range(100):
        found = LIVE.search(body)
        if found is None:
            break
        url, trigger = found.groups()
        assert trigger == "load"
        started = time.monotonic()
        response = owner_client.get(html.unescape(url), **HTMX)
        assert time.monotonic() - started < 20, "an answer waited for its time limit"
        answers.append(response.status_code)
        body = response.content.decode()
    # Every answer but the last was the panel as it moved; the last, the results (286).
    assert not answers or answers[-1] == 286 and set(answers[:-1]) <= {200}, answers
    # 30 of the 300 cases are not valid (every tenth raises, one is a bare number): the
    # page says so above the results, with the problem most of them share.
    assert "300 of 300 cases scored." in body
    assert '<span class="verdict bad">30 of 300 cases failed</span>' in body
    assert "score raised KeyError" in body
    assert Evaluation.objects.get(pk=evaluation.pk).status == Evaluation.Status.DONE
