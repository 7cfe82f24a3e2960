"""In real Chromium, against a live server and a real worker: a dataset whose rows carry a
person's verdict and note, its human columns guessed by their names on the playground's
start page, and the results' "agree with people" section read in English and Hindi, at a
desktop's width and a phone's."""

from __future__ import annotations

import csv

import pytest

from metrics import services as metric_services
from tests.browser.conftest import ARTIFACTS, log_in
from tests.evaluations.test_human_agreement import METRIC, ROWS, answer, verdict

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_the_agreement_with_people_reads_in_english_and_hindi(
    page, browser, live_server, django_user_model, celery_worker_process, screenshot, tmp_path
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="judged", starter="exact_match")
    metric_services.metric_save(metric, source=METRIC)
    path = tmp_path / "judged.csv"
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["question", "output", "human_verdict", "human_note"])
        for i in range(ROWS):
            note = f"the answer dodges, row {i}" if i % 8 == 0 else ""
            out.writerow([f"question {i}", answer(i), verdict(i), note])
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.click("#evaluate-metric")
    page.set_input_files("input[name=file]", str(path))
    page.click("#upload-dataset")
    page.wait_for_selector("#start-evaluation")
    assert page.input_value("select[data-column=human_verdict]") == "human_label"
    assert page.input_value("select[data-column=human_note]") == "human_note"
    page.click("details.human-settings summary")
    assert page.is_visible("input[name=human_threshold]")
    screenshot(page, "human-en-start")
    page.check("input[name=count][value=every]")
    page.click("#start-evaluation")
    page.wait_for_selector("#people", timeout=60_000)
    section = page.inner_text("#people")
    assert "Cohen's kappa" in section and "95% interval" in section
    assert "the answer dodges, row 0" in section  # the person's note beside the metric
    screenshot(page, "human-en-results")
    page.locator("#people").screenshot(path=str(ARTIFACTS / "human-en-people.png"))
    results_url = page.url

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="hi-IN")
    small = phone.new_page()
    try:
        log_in(small, live_server, "alice", "alice-pass-123", language="hi")
        small.goto(results_url.replace("/en/", "/hi/", 1))
        small.wait_for_selector("#people")
        assert small.get_attribute("html", "lang") == "hi"
        assert "क्या मेट्रिक लोगों से सहमत है?" in small.inner_text("#people-title")
        assert no_horizontal_scroll(small)
        small.locator("#people").scroll_into_view_if_needed()
        screenshot(small, "human-hi-phone-results")
        small.locator("#people").screenshot(path=str(ARTIFACTS / "human-hi-phone-people.png"))
    finally:
        phone.close()
