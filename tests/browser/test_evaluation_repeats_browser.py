"""In real Chromium, against a live server: the start form's "How many times" shows only
under "Score each case several times" (CSS alone), and a K-repeat evaluation's noise, its
cases' K scores and one case's scorings read at a desktop's width and a phone's."""

from __future__ import annotations

import pytest

from evaluations.summary import summarize
from metrics import services as metric_services
from submissions import services as submit_services
from tests.browser.conftest import log_in
from tests.evaluations.test_evaluation_repeats import repeat_evaluation
from tests.evaluations.test_evaluation_start import RECORDED_CSV, ROLES

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_how_many_times_shows_under_its_choice_and_the_noise_reads_on_a_phone(
    page, browser, live_server, django_user_model, screenshot
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="judge", starter="exact_match")
    dataset = submit_services.dataset_create(
        owner=owner, filename="recorded.csv", data=RECORDED_CSV.encode()
    )
    assert set(ROLES) <= set(dataset.columns)
    log_in(page, live_server, "alice", "alice-pass-123")

    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/evaluate/?dataset={dataset.pk}")
    page.wait_for_selector("#start-evaluation")
    assert not page.is_visible("input[name=repeats]")
    page.check("input[name=second][value=repeat]")
    assert page.is_visible("input[name=repeats]")
    assert page.input_value("input[name=repeats]") == "3"
    assert not page.is_visible("select[name=second_version]")
    page.locator("#evaluate-second").scroll_into_view_if_needed()
    screenshot(page, "evaluation-repeats-1-start")
    page.check("input[name=second][value=compare]")
    assert not page.is_visible("input[name=repeats]")
    assert page.is_visible("select[name=second_version]")

    cases = {i: [("valid", 1.0)] * 3 for i in range(12)}
    cases.update({i: [("valid", 1.0), ("valid", 0.0), ("valid", 1.0)] for i in (3, 7, 8)})
    cases[10] = [("valid", 0.0), ("error", None), ("valid", 1.0)]
    evaluation = repeat_evaluation(owner, 3, cases)
    evaluation.summary = summarize(evaluation)
    evaluation.save()

    page.goto(f"{live_server.url}/en/evaluations/{evaluation.pk}/")
    flips = page.text_content("#noise-flips")
    assert flips.startswith("Scored 3 times, 33.3% of cases changed verdict (95% interval")
    page.locator("#noise").scroll_into_view_if_needed()
    screenshot(page, "evaluation-repeats-2-results")
    page.click("#noise table a >> nth=0")
    page.wait_for_selector("#scorings")
    assert page.url.endswith(f"/evaluations/{evaluation.pk}/cases/10/")
    screenshot(page, "evaluation-repeats-3-case")

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="hi-IN")
    small = phone.new_page()
    try:
        log_in(small, live_server, "alice", "alice-pass-123", language="hi")
        small.goto(f"{live_server.url}/hi/evaluations/{evaluation.pk}/")
        small.wait_for_selector("#noise")
        assert no_horizontal_scroll(small)
        small.locator("#noise").scroll_into_view_if_needed()
        screenshot(small, "evaluation-repeats-4-hi-phone-results")
        small.goto(f"{live_server.url}/hi/evaluations/{evaluation.pk}/cases/")
        assert no_horizontal_scroll(small)
        screenshot(small, "evaluation-repeats-5-hi-phone-cases")
    finally:
        phone.close()
