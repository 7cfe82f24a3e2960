"""The run page: a run the runs worker's execution ran to its end in this process, and
runs whose rows a worker in the middle of one leaves, written by hand; the live part that
the server answers as soon as the row changes; cancel, resume and the best candidate's
download; another user's run, which does not exist for them."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta
from html import unescape

import pytest
from django.db import connection
from django.utils import timezone

from jobs import notify
from runs import presenters, reasons, views
from runs.models import Run, RunCandidate, RunEvent
from runs.textdiff import inline_diff
from tests import quiz
from tests.runs.run_data import (
    HAND_TEXTS,
    finished_quiz_run,
    hand_run,
    quiz_models,
    submit_quiz_run,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
LIVE_URL = re.compile(r'hx-get="([^"]+)"')


def text_of(html: str) -> str:
    """The page's words as a reader gets them: no tags, entities read, spaces folded."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def section(html: str, ident: str) -> str:
    start = html.index(f'id="{ident}"')
    end = html.index("</section>", start)
    return html[start:end]


@pytest.fixture
def finished(
    owner_client,
    draft,
    owner,
    session_models,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    settings.RUNS_DIR = tmp_path / "runs"
    run = finished_quiz_run(
        owner_client, draft, owner, django_capture_on_commit_callbacks, session_models
    )
    assert run.status == "finished", (run.failure, run.failure_params)
    return run


def test_a_finished_run_shows_what_it_found(owner_client, finished):
    run = finished
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    page = text_of(html)
    progress, result = run.progress, run.result
    calls = progress["metric_calls"]
    # Where it stands, and why it stopped.
    assert re.search(r'id="run-status">Finished<', html)
    assert "The run finished" in page
    # It found a candidate perfect on every validation case and kept the rest of its budget.
    assert run.stop_reason == "perfect_score" and calls < 60
    assert "A candidate scored 1 on every validation case, so it stopped there" in page
    assert f"{calls} of 60 metric calls" in page
    assert re.search(rf'<progress class="run-progress" max="60" value="{calls}"', html)
    assert f"Iteration {progress['iteration']}" in page
    assert "Ran for" in page and "Time left" not in page
    # What each model cost, and the total against the dollar budget.
    spend = section(html, "run-standing")
    for role in ("task", "metric", "reflection"):
        row = re.search(rf'<tr class="spend-{role}">(.*?)</tr>', spend, re.S).group(1)
        assert str(progress["spend"][f"{role}_calls"]) in text_of(row)
    assert re.search(r"\$0\.\d+ of \$5\.00", text_of(spend))
    assert str(progress["spend"]["task_calls"]) in text_of(spend)
    # The chart: an accessible SVG, its points in a table, and a sentence.
    chart = section(html, "run-chart")
    assert 'role="img"' in chart and "<title" in chart and "<desc" in chart
    assert chart.count('<circle class="chart-point') == len(progress["points"])
    assert "From 0, the starting candidate's score, to 1 after" in text_of(chart)
    # The Pareto frontier: a row per validation case, the best candidate on each.
    front = section(html, "run-frontier")
    assert front.count('<th scope="row">Case ') == len(progress["front"])
    assert "candidate 1 (1)" in text_of(front)
    # The tree: the seed, and the best candidate under it.
    tree = section(html, "run-tree")
    assert re.search(
        r'id="candidate-0".*?<ul><li class="tree-node tree-best" id="candidate-1"', tree, re.S
    )
    assert "found after" in text_of(tree)
    # The best candidate's text, and what it changed in the seed, marked in words too.
    best = section(html, "run-best")
    assert quiz.INSTRUCTION in unescape(best)
    assert result["best"]["text"] in unescape(best)
    assert '<ins><span class="visually-hidden">added: </span>' in best
    assert "words were added." in text_of(best)
    assert f'href="/en/runs/{run.pk}/best.txt"' in best and "data-copy-target" in best
    # Seed against best on each validation case.
    cases = section(html, "run-cases")
    rows = re.findall(
        r'<tr class="change-better"><th scope="row">Case \d+</th><td class="num">0</td><td class="num">1</td>',
        cases,
    )
    assert len(rows) == len(result["best"]["val_scores"])
    assert "better" in text_of(cases)
    # The log, newest first, in words.
    log = section(html, "run-log")
    assert text_of(log).index("The run ended: Finished.") < text_of(log).index("joined the pool")
    # Ended: the best to take away, no buttons, no polling.
    assert "Its best candidate is below, to copy or download." in page
    assert f'href="/en/runs/{run.pk}/bundle.zip"' in html
    assert 'id="run-cancel"' not in html and 'id="run-resume"' not in html
    assert "hx-get" not in section(html, "run-standing") and not LIVE_URL.search(html)
    # The set-up, lower on the page, with the dollar budget.
    setup = text_of(html[html.index('id="run-setup"') :])
    assert "capitals.jsonl" in setup and "60 metric calls · at most $5.00 on models" in setup


def test_an_ended_runs_live_part_answers_at_once_and_stops_polling(owner_client, finished):
    started = time.monotonic()
    response = owner_client.get(
        f"/en/runs/{finished.pk}/", {"partial": "live", "since": "running.0"}, **HTMX
    )
    assert time.monotonic() - started < 5
    assert response.status_code == 286  # htmx stops polling, and swaps the final part in
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="run-live"') and "<html" not in html
    assert "hx-get" not in html.split(">", 1)[0]
    assert "The run finished" in html and quiz.INSTRUCTION in unescape(html)


def test_a_running_run_is_followed_live(owner_client, owner, monkeypatch):
    run = hand_run(owner, attempt=2)
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    page = text_of(html)
    assert re.search(r'id="run-status">Running<', html)
    assert "Resumed 1 time" in page
    assert "24 of 60 metric calls (40.0%)" in page and "Time left" in page
    assert "0.75, candidate 1 (the starting candidate scored 0)" in page
    assert "$0.012" in page and "$0.046" in page and "$0.058 of $5.00" in page
    assert "Candidate 1: best on 4 cases" in page and "Candidate 2: best on 3 cases" in page
    tree = section(html, "run-tree")
    # Nested: the grandchild inside its parent's list, with its failed cases.
    assert re.search(r'id="candidate-1".*?<ul><li class="tree-node" id="candidate-2"', tree, re.S)
    assert "3 cases failed: run_error" in text_of(tree)
    assert HAND_TEXTS[1] in unescape(section(html, "run-best"))
    log = text_of(section(html, "run-log"))
    assert (
        "Candidate 2, from candidate 1, did better on the sample (3 in all) and joined the pool."
        in log
    )
    assert "no better than 2: it was dropped." in log
    assert "The Pareto frontier now holds candidates 1, 2." in log
    assert 'id="run-cancel"' in html and 'id="run-resume"' not in html
    live = LIVE_URL.search(html).group(1).replace("&amp;", "&")
    assert live.startswith(f"/en/runs/{run.pk}/?partial=live&since=running.")

    # Nothing changed: the request waits, then answers with the same part, still live.
    monkeypatch.setattr(views, "LONG_POLL_S", 0.3)
    started = time.monotonic()
    same = owner_client.get(live, **HTMX)
    assert time.monotonic() - started >= 0.25
    assert same.status_code == 200 and live in same.content.decode().replace("&amp;", "&")

    # The worker finds candidate 3 and writes its progress: the next answer shows it at once.
    RunCandidate.objects.create(
        run=run,
        idx=3,
        text=HAND_TEXTS[2] + " Be brief.",
        parents=[1],
        val_scores={"0": 1.0, "1": 1.0, "2": 1.0, "3": 1.0},
        average=1.0,
        discovered_at=30,
    )
    progress = dict(run.progress, metric_calls=36, candidates=4, best={"idx": 3, "score": 1.0})
    progress["points"] = [[0, 0.0], [12, 0.75], [30, 1.0]]
    Run.objects.filter(pk=run.pk).update(progress=progress, heartbeat_at=timezone.now())
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    started = time.monotonic()
    changed = owner_client.get(live, **HTMX)
    assert time.monotonic() - started < 5
    html = changed.content.decode()
    assert changed.status_code == 200 and "<html" not in html
    assert "36 of 60 metric calls (60.0%)" in text_of(html)
    assert re.search(r'id="candidate-3"', html) and "Be brief." in section(html, "run-best")
    assert section(html, "run-chart").count('<circle class="chart-point') == 3
    following = LIVE_URL.search(html).group(1).replace("&amp;", "&")
    assert following != live  # it asks with the token of what it shows now

    # It ends: the next answer is final and stops the polling.
    Run.objects.filter(pk=run.pk).update(
        status="finished", stop_reason="metric_calls", finished_at=timezone.now()
    )
    final = owner_client.get(following, **HTMX)
    assert final.status_code == 286 and "The run finished" in final.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_write_announced_by_the_worker_wakes_the_waiting_request(
    owner_client, owner, monkeypatch, broker
):
    monkeypatch.setattr(views, "LONG_POLL_S", 30.0)
    run = hand_run(owner)
    page = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    live = LIVE_URL.search(page).group(1).replace("&amp;", "&")

    def write() -> None:
        time.sleep(0.3)
        try:
            progress = dict(run.progress, metric_calls=30)
            Run.objects.filter(pk=run.pk).update(progress=progress)
            notify.check_changed(run.pk, "run")
        finally:
            connection.close()

    thread = threading.Thread(target=write)
    thread.start()
    started = time.monotonic()
    response = owner_client.get(live, **HTMX)
    waited = time.monotonic() - started
    thread.join()
    assert response.status_code == 200
    assert "30 of 60 metric calls" in text_of(response.content.decode())
    assert waited < 10, "the request waited for its time limit, not for the announcement"


def test_a_paused_run_says_why_and_resumes(owner_client, owner, django_capture_on_commit_callbacks):
    run = hand_run(
        owner,
        status="paused",
        failure="provider_failed",
        failure_params={"role": "reflection", "code": "server_error", "message": "down"},
    )
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert (
        "The reflection model's provider kept failing (server_error): down. Everything so far "
        "is kept; Resume goes on from the last checkpoint."
    ) in text_of(html)
    assert re.search(r'id="run-status">Paused<', html)
    assert 'id="run-resume"' in html and 'id="run-cancel"' in html
    assert not LIVE_URL.search(html)  # nothing changes until it is resumed
    # Without JavaScript: a plain POST, then the page again.
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = owner_client.post(f"/en/runs/{run.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/en/runs/{run.pk}/"
    assert len(sent) == 1  # the run's task message, sent again once committed
    run.refresh_from_db()
    assert (run.status, run.failure, run.failure_params) == ("queued", "", {})
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "It waits for a worker to go on from its last checkpoint." in text_of(html)
    assert LIVE_URL.search(html)


def test_resume_with_htmx_answers_with_the_live_part(
    owner_client, owner, django_capture_on_commit_callbacks
):
    run = hand_run(owner, status="paused", failure="time_limit")
    assert "The run reached the worker's time limit for one go." in text_of(
        owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    )
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(f"/en/runs/{run.pk}/resume/", **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<div id="run-live"')
    assert re.search(r'id="run-status">Queued<', html) and LIVE_URL.search(html)


def test_cancel_ends_a_queued_or_paused_run_and_stops_a_running_one(owner_client, owner):
    queued = hand_run(owner, status="queued", attempt=0)
    response = owner_client.post(f"/en/runs/{queued.pk}/cancel/")
    assert response.status_code == 302 and response["Location"] == f"/en/runs/{queued.pk}/"
    queued.refresh_from_db()
    assert queued.status == "cancelled" and queued.finished_at is not None
    html = owner_client.get(f"/en/runs/{queued.pk}/").content.decode()
    assert "You cancelled it. What it found until then is kept." in text_of(html)
    assert 'id="run-cancel"' not in html and not LIVE_URL.search(html)

    paused = hand_run(owner, status="paused", failure="time_limit")
    owner_client.post(f"/en/runs/{paused.pk}/cancel/", **HTMX)
    assert Run.objects.get(pk=paused.pk).status == "cancelled"

    running = hand_run(owner)
    response = owner_client.post(f"/en/runs/{running.pk}/cancel/", **HTMX)
    html = response.content.decode()
    running.refresh_from_db()
    assert running.status == "running" and running.cancel_requested
    assert "Stopping the run… What it found so far is kept." in text_of(html)
    assert 'id="run-cancel"' not in html and LIVE_URL.search(html)  # it follows the stop


def test_an_ended_run_can_be_neither_resumed_nor_cancelled(owner_client, owner):
    run = hand_run(owner, status="finished", stop_reason="usd_budget", finished_at=timezone.now())
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "It reached its dollar budget of $5.00." in text_of(html)
    assert 'id="run-resume"' not in html and 'id="run-cancel"' not in html
    for action in ("resume", "cancel"):
        response = owner_client.post(f"/en/runs/{run.pk}/{action}/")
        assert response.status_code == 302
        run.refresh_from_db()
        assert run.status == "finished" and not run.cancel_requested


def test_the_best_candidate_downloads_as_text(owner_client, owner, finished):
    response = owner_client.get(f"/en/runs/{finished.pk}/best.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="skynet-run-{finished.pk}-best.txt"'
    )
    assert b"".join(response.streaming_content).decode() == finished.result["best"]["text"]
    # While it runs: the best so far.
    running = hand_run(owner)
    body = b"".join(owner_client.get(f"/en/runs/{running.pk}/best.txt").streaming_content)
    assert body.decode() == HAND_TEXTS[1]
    # Before any candidate was scored there is nothing to download.
    queued = hand_run(owner, status="queued", attempt=0)
    RunCandidate.objects.filter(run=queued).delete()
    assert owner_client.get(f"/en/runs/{queued.pk}/best.txt").status_code == 404
    html = owner_client.get(f"/en/runs/{queued.pk}/").content.decode()
    assert "best.txt" not in html and "No candidate has been scored yet." in text_of(html)


RUN_URLS = {
    "runs:detail": ("get", "/en/runs/{pk}/"),
    "runs:cancel": ("post", "/en/runs/{pk}/cancel/"),
    "runs:resume": ("post", "/en/runs/{pk}/resume/"),
    "runs:best": ("get", "/en/runs/{pk}/best.txt"),
    "runs:bundle": ("get", "/en/runs/{pk}/bundle.zip"),
}


@pytest.mark.parametrize("name", sorted(RUN_URLS))
def test_another_users_run_does_not_exist_for_them(client, owner, outsider, name):
    run = hand_run(owner, status="paused", failure="time_limit")
    method, path = RUN_URLS[name]
    url = path.format(pk=run.pk)
    anonymous = getattr(client, method)(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/en/accounts/login/")
    client.force_login(outsider)
    for headers in ({}, HTMX):
        assert getattr(client, method)(url, **headers).status_code == 404
    run.refresh_from_db()
    assert run.status == "paused" and not run.cancel_requested


def test_the_runs_list_shows_each_runs_status_and_best_score(owner_client, owner):
    running = hand_run(owner)
    paused = hand_run(owner, status="paused", failure="time_limit", metric_calls=12)
    Run.objects.filter(pk=paused.pk).update(
        progress=dict(paused.progress, metric_calls=12, best={"idx": 2, "score": 0.5})
    )
    queued = hand_run(owner, status="queued", attempt=0)
    Run.objects.filter(pk=queued.pk).update(progress={})
    html = owner_client.get("/en/runs/").content.decode()

    def row(run):
        return text_of(re.search(rf'<tr id="run-{run.pk}">(.*?)</tr>', html, re.S).group(1))

    assert "Running" in row(running) and "0.75 (started at 0)" in row(running)
    assert "24 of 60" in row(running)
    assert "Paused" in row(paused) and "0.5" in row(paused) and "12 of 60" in row(paused)
    assert "Queued" in row(queued) and "—" in row(queued) and "0 of 60" in row(queued)


def test_an_event_log_that_names_nothing_known_still_reads(owner_client, owner):
    run = hand_run(owner)
    RunEvent.objects.create(run=run, kind="ended", data={"status": "mystery"})
    RunEvent.objects.create(run=run, kind="accepted", data={})
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    log = text_of(section(html, "run-log"))
    assert "The run ended: mystery." in log and "Candidate ?, from candidate ?" in log


@pytest.mark.parametrize(
    ("status", "code", "params", "expected"),
    [
        (
            "paused",
            "provider_failed",
            {"role": "task", "code": "timeout", "message": "slow."},
            "The task model's provider kept failing (timeout): slow. Everything so far is kept",
        ),
        (
            "paused",
            "sandbox_unavailable",
            {"reason": "no_bwrap", "detail": "gone"},
            "No case could run, because the sandbox could not be started: The sandbox is unavailable on this worker: there is no bubblewrap (gone).",
        ),
        (
            "paused",
            "model_unavailable",
            {"code": "unknown_model", "message": "openai/x"},
            "A model this run uses can no longer be used (unknown_model): openai/x.",
        ),
        (
            "paused",
            "internal_error",
            {"type": "KeyError"},
            "The worker stopped the run on an unexpected error (KeyError).",
        ),
        (
            "failed",
            "metric_failed",
            {"stage": "load", "problem": "", "params": {}},
            "metric.py did not get past the",
        ),
        (
            "failed",
            "engine_unavailable",
            {"engine": "dspy_gepa"},
            "The DSPy GEPA engine cannot run submitted runs on this workbench yet",
        ),
        ("failed", "no_train_rows", {}, "The run has no training rows to learn from."),
        ("failed", "worker_lost", {}, "The worker running it was lost 2 times"),
        ("failed", "something_new", {}, "The run stopped before it finished."),
    ],
)
def test_why_a_run_paused_or_failed_reads_in_words(status, code, params, expected):
    run = Run(status=status, failure=code, failure_params=params, attempt=2, config={})
    text = reasons.failure_text(run)
    assert expected in text
    assert text.endswith("Resume goes on from the last checkpoint.") == (status == "paused")


def test_a_stop_file_or_a_dollar_budget_ends_it_in_words():
    run = Run(status="finished", stop_reason="stop_file", config={"budget": {"usd": 2.5}})
    assert "stop file (gepa.stop)" in reasons.stop_text(run)
    run.stop_reason = "usd_budget"
    assert reasons.stop_text(run) == "It reached its dollar budget of $2.50."


def test_a_long_line_of_descent_is_a_nested_list_without_recursion():
    chain = [
        RunCandidate(idx=i, text=str(i), parents=[i - 1] if i else [], average=i / 600)
        for i in range(600)
    ]
    items = presenters.tree(chain, best_idx=599)
    tags = [item["tag"] for item in items]
    assert tags.count("ul") == tags.count("/ul") == 600
    assert tags.count("li") == tags.count("/li") == 600
    assert [item for item in items if item["tag"] == "li"][-1]["best"]
    # A merge hangs under its first parent and names the other.
    merged = presenters.tree(
        [
            RunCandidate(idx=0, parents=[]),
            RunCandidate(idx=1, parents=[0]),
            RunCandidate(idx=2, parents=[0]),
            RunCandidate(idx=3, parents=[1, 2]),
        ],
        best_idx=3,
    )
    node = next(item for item in merged if item.get("idx") == 3)
    assert node["merged_text"] == "also from candidate 2"


def test_the_diff_marks_words_and_escapes_the_text():
    diff = inline_diff("Say <b>hi</b> to them.", "Say <b>hello</b> to them all.")
    # "them." became "them all.": a word each way, besides the greeting.
    assert (diff.removed, diff.added, diff.same) == (2, 3, False)
    assert "<b>" not in diff.html and "&lt;b&gt;hello&lt;/b&gt;" in diff.html
    assert (
        '<del><span class="visually-hidden">removed: </span>&lt;b&gt;hi&lt;/b&gt;</del>'
        in diff.html
    )
    assert inline_diff("same", "same").same


def test_a_run_whose_worker_was_lost_reads_as_the_sweep_will_leave_it(
    owner_client, owner, monkeypatch, settings
):
    """Queued again, and its page waits for news as any queued run's does: the token it
    asks with is the one of what it shows, so the wait does not answer at once forever."""
    lost = hand_run(owner)
    Run.objects.filter(pk=lost.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    html = owner_client.get(f"/en/runs/{lost.pk}/").content.decode()
    assert re.search(r'id="run-status">Queued<', html)
    assert "It waits for a worker to go on from its last checkpoint." in text_of(html)
    live = LIVE_URL.search(html).group(1).replace("&amp;", "&")
    monkeypatch.setattr(views, "LONG_POLL_S", 0.3)
    started = time.monotonic()
    response = owner_client.get(live, **HTMX)
    assert time.monotonic() - started >= 0.25 and response.status_code == 200
    assert live in response.content.decode().replace("&amp;", "&")
    # Out of attempts: it fails, and the live part says so and stops.
    Run.objects.filter(pk=lost.pk).update(attempt=settings.RUN_MAX_ATTEMPTS)
    final = owner_client.get(live, **HTMX)
    assert final.status_code == 286
    assert "The worker running it was lost" in text_of(final.content.decode())
    assert Run.objects.get(pk=lost.pk).status == "running"  # reading it wrote nothing


def messages_of(html: str) -> list[str]:
    start = html.index('id="messages"')
    region = html[start : html.index("</div>", start)]
    return [text_of(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", region, re.S)]


def test_the_submit_message_never_says_queued_of_a_run_that_has_moved_on(owner_client, finished):
    """The message was written when the run was submitted; the run ran to its end before
    its page was first opened (a worker can be that quick)."""
    html = owner_client.get(f"/en/runs/{finished.pk}/").content.decode()
    # (The wizard's own messages before it are there too: this client follows no redirect.)
    assert "Run submitted." in messages_of(html)
    assert not [text for text in messages_of(html) if "queued" in text]
    assert "The run finished" in text_of(section(html, "run-standing"))
    # A message is shown once: opened again, the page has none.
    again = owner_client.get(f"/en/runs/{finished.pk}/").content.decode()
    assert messages_of(again) == []


def test_a_queued_runs_page_says_it_was_submitted_and_its_panel_where_it_stands(
    owner_client, draft, owner, session_models, django_capture_on_commit_callbacks
):
    with quiz_models(session_models):
        run = submit_quiz_run(owner_client, draft, owner, django_capture_on_commit_callbacks)
    html = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "Run submitted." in messages_of(html)
    standing = text_of(section(html, "run-standing"))
    assert "The run is queued" in standing and "It waits for a worker to pick it up." in standing
    # A worker takes it: the live part, which alone changes, says so; the message above it
    # is not part of it, and still true.
    Run.objects.filter(pk=run.pk).update(status="running", started_at=timezone.now())
    live = owner_client.get(f"/en/runs/{run.pk}/", {"partial": "live"}, **HTMX).content.decode()
    assert 'id="messages"' not in live and "The run is running" in text_of(live)
