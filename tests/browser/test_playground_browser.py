"""In real Chromium: type a metric and see a diagnostic, run the check and watch the table
fill, fix the metric, re-run, pass."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError

from checks.models import Check
from metrics import services as metric_services
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

BROKEN = """def score(input, output, expected=None):
    want = expected["label"]
    return 1.0 if output == want else 0.0, "Expected " + want
"""

FIXED = """def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": f"Correct: the label is {want!r}."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""


def set_source(page, text: str) -> None:
    page.evaluate(
        "text => document.querySelector('textarea[name=source]').skynetEditor.setValue(text)",
        text,
    )


def test_write_check_fix_and_pass(
    page, live_server, django_user_model, celery_worker_process, screenshot
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="ticket labels", starter="exact_match")
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    screenshot(page, "playground-en-start")

    # A diagnostic while typing: a score that takes one argument.
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.type("def score(input):\n    return 1.0")
    page.wait_for_selector("#diagnostics-list a.trace-line")
    assert "score must accept (input, output)" in page.inner_text("#diagnostics-list")
    page.wait_for_selector(".cm-lintRange-error, .cm-lint-marker-error")
    screenshot(page, "playground-en-diagnostic")

    # A metric that breaks the contract: side info is a string.
    set_source(page, BROKEN)
    page.click("#run-check")
    page.wait_for_selector("#check.status-failed", timeout=60_000)
    assert page.locator("table.cases tbody tr").count() == 3
    assert page.locator("table.cases tbody tr.case-invalid").count() == 3
    assert "No. The side info is not a dict." in page.inner_text("table.cases")
    assert "Metric return value" in page.inner_text(".stage-culprit")
    screenshot(page, "playground-en-failed")

    # Fix it and re-run with the keyboard shortcut from inside the editor.
    set_source(page, FIXED)
    page.click(".cm-content")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#check.status-passed", timeout=60_000)
    assert page.locator("table.cases tbody tr.case-valid").count() == 3
    assert "Expected 'bug', got 'other'." in page.inner_text("table.cases")
    screenshot(page, "playground-en-passed")
    assert metric.versions.count() == 3
    # One key press, one check (the editor and the page both listen for the shortcut).
    assert Check.objects.filter(metric_version=metric.latest_version).count() == 1


def test_a_traceback_line_jumps_into_the_editor(
    page, live_server, django_user_model, celery_worker_process
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="crashy", starter="exact_match")
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    set_source(page, "def score(input, output, expected=None):\n\n\n    return 1 / 0\n")
    page.click("#run-check")
    page.wait_for_selector("#check.status-failed", timeout=60_000)
    page.click("table.cases a.trace-line[data-line='4']")
    line = page.evaluate(
        "() => { const v = document.querySelector('textarea[name=source]').skynetEditor.view;"
        " return v.state.doc.lineAt(v.state.selection.main.head).number; }"
    )
    assert line == 4


def test_leaving_with_unsaved_changes_warns(page, live_server, django_user_model):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="draft", starter="exact_match")
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    page.click(".cm-content")
    page.keyboard.type("# more\n")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.dismiss()))
    with pytest.raises(PlaywrightError, match="ERR_ABORTED"):
        # Dismissing the warning keeps the user on the page, so the navigation aborts.
        page.goto(f"{live_server.url}/en/", wait_until="commit")
    assert dialogs == ["beforeunload"]
    assert page.url.endswith(f"/en/metrics/{metric.pk}/")
    assert "# more" in page.evaluate(
        "() => document.querySelector('textarea[name=source]').skynetEditor.getValue()"
    )
