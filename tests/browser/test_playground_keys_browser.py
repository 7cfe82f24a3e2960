"""In real Chromium, as a user meets the playground: the verdict comes into view, one key
press is one action, and a keyboard user can walk past the editor."""

from __future__ import annotations

import pytest

from checks.models import Check
from metrics import services as metric_services
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


@pytest.fixture
def playground(page, live_server, django_user_model):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    return metric


def _source(page) -> str:
    return page.evaluate(
        "() => document.querySelector('textarea[name=source]').skynetEditor.getValue()"
    )


def _in_viewport(page, selector: str) -> bool:
    return page.evaluate(
        """selector => {
            const box = document.querySelector(selector).getBoundingClientRect();
            return box.top >= 0 && box.top < window.innerHeight;
        }""",
        selector,
    )


def test_after_run_the_verdict_is_by_the_button_and_the_panel_comes_into_view(
    page, playground, celery_worker_process, screenshot
):
    assert not _in_viewport(page, "section.reference")  # the page is taller than the window
    page.click("#run-check")
    page.wait_for_selector("#run-verdict.status-passed", timeout=60_000)
    verdict = page.inner_text("#run-verdict")
    assert "Passed" in verdict and "Version 1" in verdict
    page.wait_for_function(
        "() => { const b = document.getElementById('check').getBoundingClientRect();"
        " return b.top >= 0 && b.top < window.innerHeight; }"
    )
    assert page.evaluate("() => document.activeElement.closest('#check') !== null")
    # A Run without changes says which version it checks, not "No changes since ...".
    assert "No changes since" not in page.inner_text("body")
    screenshot(page, "playground-en-verdict-in-view")


def test_ctrl_enter_in_the_editor_is_one_check_and_keeps_the_typist_in_place(
    page, playground, celery_worker_process
):
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# tweak")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#run-verdict.status-passed", timeout=60_000)
    assert Check.objects.filter(metric_version__metric=playground).count() == 1
    assert playground.versions.count() == 2
    # Still typing: the focus stayed in the editor.
    assert page.evaluate("() => document.activeElement.closest('.cm-editor') !== null")


def test_ctrl_s_after_an_edit_saves_once_and_says_so(page, playground):
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# saved with the keyboard")
    page.keyboard.press("Control+s")
    page.wait_for_selector("#messages .message.success", timeout=20_000)
    body = page.inner_text("body")
    assert "Saved as version 2." in body and "No changes since" not in body
    assert playground.versions.count() == 2


def test_tab_walks_past_the_editor_until_the_user_types_there(page, playground):
    before = _source(page)
    # The first Tab on a page reaches the skip link.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    for _ in range(40):  # through the top bar and into the editor, then out of it
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.closest('.cm-editor') !== null"):
            break
    else:
        pytest.fail("Tab never reached the editor")
    help_id = page.get_attribute(".cm-content", "aria-describedby")
    assert help_id and "Esc, then Tab" in page.inner_text(f"#{help_id}")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('.cm-editor') === null")
    assert _source(page) == before  # no indent was typed into metric.py

    # Back in, a key typed: from then on Tab indents, as in any code editor.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.closest('.cm-editor') !== null")
    page.keyboard.press("Control+Home")
    page.keyboard.press("End")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('.cm-editor') !== null")
    assert _source(page) != before


def test_a_running_loop_is_cancelled_from_its_panel(page, playground, celery_worker_process):
    page.evaluate(
        "text => document.querySelector('textarea[name=source]').skynetEditor.setValue(text)",
        "def score(input, output, expected=None):\n    while True:\n        pass\n",
    )
    page.fill("input[name=timeout_s]", "300")
    page.click("#run-check")
    page.wait_for_selector("#check.status-running", timeout=60_000)
    page.click("#check .cancel-check button")
    page.wait_for_selector("#run-verdict.status-failed", timeout=60_000)
    assert "Cancelled" in page.inner_text("#run-verdict")
    assert "You cancelled this check before it finished." in page.inner_text("#check")
    check = Check.objects.get(metric_version__metric=playground)
    assert check.failure == "cancelled"
