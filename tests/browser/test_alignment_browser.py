"""In real Chromium against a live server: the start page read on a desktop in English and
on a phone in Hindi, Start landing on the wizard's check step, and a finished alignment
run's Accept landing on the comparison. Screenshots in test-artifacts/alignment-*.png."""

from __future__ import annotations

import pytest

from alignment.models import Alignment

# The alignment tests' own fixtures, here beside the browser's (one Chromium a session).
from tests.alignment.conftest import (  # noqa: F401
    english,
    finished_run,
    hand_evaluation,
    judge_version,
    pending_translations,
)
from tests.browser.conftest import ARTIFACTS, log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_start_and_accept_in_the_browser(
    page,
    browser,
    live_server,
    owner,
    judge_version,  # noqa: F811
    screenshot,
    pending_translations,  # noqa: F811
):
    evaluation = hand_evaluation(owner, judge_version)
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/evaluations/{evaluation.pk}/align/")
    assert page.inner_text("h1") == "Improve the judge against the human labels"
    assert "You grade answers to questions." in page.inner_text("#align-first-lines")
    assert page.input_value("input[name=budget]") == "150"
    screenshot(page, "alignment-en-start")

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="hi-IN")
    small = phone.new_page()
    try:
        log_in(small, live_server, "alice", "alice-pass-123", language="hi")
        small.goto(f"{live_server.url}/hi/evaluations/{evaluation.pk}/align/")
        assert small.get_attribute("html", "lang") == "hi"
        assert no_horizontal_scroll(small)
        screenshot(small, "alignment-hi-phone-start")
    finally:
        phone.close()

    page.click("#align-start")
    page.wait_for_url("**/submit/*/check/")
    alignment = Alignment.objects.get()
    assert page.url.endswith(f"/en/submit/{alignment.draft_id}/check/")
    screenshot(page, "alignment-en-check-step")

    run = finished_run(alignment)
    page.goto(f"{live_server.url}/en/runs/{run.pk}/")
    button = page.locator("#align-accept")
    assert button.inner_text() == "Save the best prompt as a new version of sourced answers"
    page.locator("#run-standing").screenshot(path=str(ARTIFACTS / "alignment-en-accept.png"))
    button.click()
    page.wait_for_url("**/evaluations/*/")
    alignment.refresh_from_db()
    assert page.url.endswith(f"/en/evaluations/{alignment.comparison_id}/")
    assert "Saved as version 3 of sourced answers." in page.inner_text("body")
    screenshot(page, "alignment-en-comparison")
