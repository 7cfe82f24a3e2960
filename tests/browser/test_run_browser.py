"""In real Chromium, against a live server: a run the runs worker's execution ran to its
end in this process, and one a worker is in the middle of (its rows written by hand),
read in English and Hindi at a desktop's width and a phone's. Nothing scrolls sideways;
the best candidate copies to the clipboard; the running one's page follows its row and
cancels with htmx."""

from __future__ import annotations

import contextlib

import pytest
from django.test import Client
from django.utils import timezone

from jobs import queue
from runs import views
from runs.models import Run
from submissions import services as submit_services
from tests import quiz
from tests.browser.conftest import log_in
from tests.runs.run_data import HAND_TEXTS, finished_quiz_run, hand_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SIZES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
LOCALES = {"en": "en-US", "hi": "hi-IN", "es": "es-ES"}
PAIRS = tuple((language, size) for language in ("en", "es", "hi") for size in SIZES)
# The blocks of a run page, each of which must be on screen (not clipped off its side).
BLOCKS = (
    "#run-standing",
    "#run-chart",
    "#run-cases",
    "#run-best",
    "#run-frontier",
    "#run-tree",
    "#run-log",
)

IN_VIEW = """selector => {
    const box = document.querySelector(selector).getBoundingClientRect();
    return box.width > 0 && box.left >= 0 && box.right <= window.innerWidth + 1;
}"""


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def devanagari(text: str) -> bool:
    return any("\u0900" <= ch <= "\u097f" for ch in text)


@pytest.fixture
def runs(django_user_model, session_models, settings, tmp_path, monkeypatch):
    """Alice's finished quiz run, made through the wizard's views and run in this process,
    and a running one written by hand."""
    settings.RUNS_DIR = tmp_path / "runs"
    # A long poll answers within 2 s here, so no request outlives its page for long.
    monkeypatch.setattr(views, "LONG_POLL_S", 2.0)
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    client = Client()
    client.force_login(owner)

    @contextlib.contextmanager
    def capture(execute=False):
        # Task messages are kept here, not sent: the check and the run run in this process.
        sent = []
        monkeypatch.setattr(queue, "enqueue", lambda task, pk: sent.append((task, pk)))
        yield sent

    draft = submit_services.draft_create(owner=owner)
    finished = finished_quiz_run(client, draft, owner, capture, session_models)
    assert finished.status == "finished", (finished.failure, finished.failure_params)
    program = submit_services.draft_create(owner=owner)
    dspy_run = finished_quiz_run(
        client, program, owner, capture, session_models, kind="dspy", engine="auto"
    )
    assert dspy_run.status == "finished", (dspy_run.failure, dspy_run.failure_params)
    running = hand_run(owner, attempt=2)
    return {"finished": finished, "dspy": dspy_run, "running": running}


def open_page(browser, live_server, language: str, size: str, url: str):
    context = browser.new_context(viewport=SIZES[size], locale=LOCALES[language])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server, "alice", "alice-pass-123", language=language)
    page.goto(f"{live_server.url}{url}")
    page.wait_for_selector("#run-live")
    return context, page


def test_a_finished_run_reads_at_every_size_and_copies_its_best(
    browser, live_server, runs, screenshot
):
    run = runs["finished"]
    best = run.result["best"]["text"]
    # Spanish has the longest words: at a phone's width too.
    for language, size in PAIRS:
        context, page = open_page(
            browser, live_server, language, size, f"/{language}/runs/{run.pk}/"
        )
        try:
            assert page.get_attribute("html", "lang") == language
            for block in BLOCKS:
                assert page.is_visible(block), block
                assert page.evaluate(IN_VIEW, block), f"{block} is off the screen at {size}"
            assert page.locator("#run-chart svg.run-chart[role=img]").is_visible()
            points = page.locator("#run-chart circle.chart-point").count()
            assert points == len(run.progress["points"])
            assert page.locator("#run-frontier tbody tr").count() == len(run.progress["front"])
            assert page.locator("#run-tree li.tree-node").count() == run.progress["candidates"]
            cases = page.locator("#run-cases tbody tr").count()
            assert cases == len(run.result["best"]["val_scores"])
            assert page.locator("#run-best pre.candidate-text").first.inner_text() == best
            assert page.locator("#best-diff ins").count() >= 1
            assert page.locator("#run-cancel, #run-resume").count() == 0
            if language == "en":
                assert page.inner_text("#run-status") == "Finished"
            elif language == "hi":
                assert devanagari(page.inner_text(".topbar")), "the page is not in Hindi"
            assert no_horizontal_scroll(page), f"{language} at {size} scrolls sideways"
            if (language, size) == ("en", "desktop"):
                # The Copy button is JavaScript's; it copies the text exactly.
                page.click("#run-best button.copy-text")
                page.wait_for_function(
                    "() => document.querySelector('#run-best .copy-status').textContent !== ''"
                )
                assert page.evaluate("() => navigator.clipboard.readText()") == best
                with page.expect_download() as download:
                    page.click("#best-download")
                assert open(download.value.path(), encoding="utf-8").read() == best
            screenshot(page, f"run-{language}-{size}")
        finally:
            context.close()


def test_a_finished_dspy_run_reads_at_every_size(browser, live_server, runs, screenshot):
    run = runs["dspy"]
    best = run.result["best"]["text"]
    assert quiz.INSTRUCTION in best
    for language, size in PAIRS:
        context, page = open_page(
            browser, live_server, language, size, f"/{language}/runs/{run.pk}/"
        )
        try:
            for block in BLOCKS:
                assert page.is_visible(block), block
                assert page.evaluate(IN_VIEW, block), f"{block} is off the screen at {size}"
            # The best candidate is the program's instructions, and says which engine ran.
            assert page.locator("#run-best pre.candidate-text").first.inner_text() == best
            assert "DSPy GEPA" in page.inner_text("main")
            if language == "hi":
                assert devanagari(page.inner_text(".topbar")), "the page is not in Hindi"
            assert no_horizontal_scroll(page), f"{language} at {size} scrolls sideways"
            screenshot(page, f"run-dspy-{language}-{size}")
        finally:
            context.close()


def test_a_running_run_follows_its_row_and_cancels(browser, live_server, runs, screenshot):
    run = runs["running"]
    for language, size in PAIRS:
        Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
        context, page = open_page(
            browser, live_server, language, size, f"/{language}/runs/{run.pk}/"
        )
        try:
            assert page.get_attribute("#run-live", "hx-get").startswith(
                f"/{language}/runs/{run.pk}/?partial=live&since=running."
            )
            for block in BLOCKS:
                assert page.evaluate(IN_VIEW, block), f"{block} is off the screen at {size}"
            assert page.locator("#run-tree li.tree-node").count() == 3
            assert page.locator("#run-tree .node-problems").count() == 1
            text = page.locator("#run-best pre.candidate-text").first.inner_text()
            assert text == HAND_TEXTS[1]
            assert no_horizontal_scroll(page), f"{language} at {size} scrolls sideways"
            screenshot(page, f"run-running-{language}-{size}")
        finally:
            context.close()

    # The page follows the row: a write shows without a reload.
    context, page = open_page(browser, live_server, "en", "desktop", f"/en/runs/{run.pk}/")
    try:
        assert "24 of 60 metric calls" in page.inner_text("#run-calls")
        progress = dict(run.progress, metric_calls=36, iteration=5)
        Run.objects.filter(pk=run.pk).update(progress=progress, heartbeat_at=timezone.now())
        page.wait_for_function(
            "() => document.querySelector('#run-calls').textContent.includes('36 of 60')"
        )
        assert page.inner_text("#run-iteration") == "5"
        # Cancel with htmx: the worker is asked to stop, and the page says so in place.
        page.click("#run-cancel")
        page.wait_for_selector("#run-doing:has-text('Stopping the run')")
        assert page.url.endswith(f"/en/runs/{run.pk}/")
        assert Run.objects.get(pk=run.pk).cancel_requested
        # The worker stops it: the page shows the end, and stops asking.
        Run.objects.filter(pk=run.pk).update(status="cancelled", finished_at=timezone.now())
        page.wait_for_selector("#run-standing.status-cancelled", timeout=15_000)
        assert page.get_attribute("#run-live", "hx-get") is None
        assert quiz.INSTRUCTION in page.inner_text("#run-best")
    finally:
        context.close()
