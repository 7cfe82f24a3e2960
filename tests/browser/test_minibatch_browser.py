"""In real Chromium, against a live server: the models step's minibatch size with the
warning of a noisy judge beside it (from a K-repeat evaluation made in the database),
saved at the suggested size, after which only the chance of a right call is said; at a
desktop's width and a phone's."""

from __future__ import annotations

import pytest

from submissions.models import Draft
from tests.browser.conftest import log_in
from tests.submissions.test_minibatch_wizard import NOISY
from tests.submissions.test_submit_wizard import fill_to_models, models_data, url
from tests.submissions.test_wizard_projection import evaluate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_the_warning_sits_beside_the_minibatch_size_and_goes_at_the_suggested_size(
    page, browser, live_server, owner_client, draft, saved_metric, session_models, screenshot
):
    fill_to_models(owner_client, draft, saved_metric)
    assert owner_client.post(url(draft, "models"), models_data()).status_code == 302
    draft.refresh_from_db()
    evaluate(draft, summary=NOISY)
    log_in(page, live_server, "alice", "alice-pass-123")

    page.goto(f"{live_server.url}/en/submit/{draft.pk}/models/")
    warning = page.locator("#minibatch-coin-toss")
    assert warning.is_visible()
    assert "only 74% of the time" in warning.text_content()
    assert "A minibatch of 12 would make it 90%" in warning.text_content()
    assert page.input_value("input[name=minibatch]") == "3"
    # Right under the field it is about.
    field = page.locator(".field-minibatch").bounding_box()
    box = warning.bounding_box()
    assert 0 <= box["y"] - (field["y"] + field["height"]) < 60
    page.locator(".field-minibatch").scroll_into_view_if_needed()
    screenshot(page, "minibatch-1-coin-toss")

    phone = browser.new_context(viewport={"width": 375, "height": 800}, locale="en-US")
    small = phone.new_page()
    log_in(small, live_server, "alice", "alice-pass-123")
    small.goto(f"{live_server.url}/en/submit/{draft.pk}/models/")
    assert small.locator("#minibatch-coin-toss").is_visible()
    assert no_horizontal_scroll(small)
    small.locator("#minibatch-coin-toss").scroll_into_view_if_needed()
    screenshot(small, "minibatch-2-phone")
    phone.close()

    page.fill("input[name=minibatch]", "12")
    with page.expect_response(lambda response: response.request.method == "POST"):
        page.click("button[name=action][value=save]")
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling')")
    assert page.input_value("input[name=minibatch]") == "12"
    assert page.locator("#minibatch-coin-toss").count() == 0
    assert "wins the minibatch comparison 90% of the time" in page.text_content(
        "#minibatch-right-call"
    )
    assert Draft.objects.get(pk=draft.pk).minibatch == 12
    screenshot(page, "minibatch-3-saved")
