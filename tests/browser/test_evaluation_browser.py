"""In real Chromium, against a live server and a real worker: a metric evaluated on an
uploaded dataset from the playground, its results page read in English and Hindi, at a
desktop's width and a phone's, and the case table filtered to the invalid cases."""

from __future__ import annotations

import csv
import io

import pytest

from evaluations.models import Evaluation
from metrics import services as metric_services
from tests.browser.conftest import log_in
from tests.evaluations.evaluation_data import LABEL_METRIC, LABELS, output_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

ROWS = 120


def upload_file(tmp_path):
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "label", "output"])
    for i in range(ROWS):
        out.writerow([f"question {i}", LABELS[i % 4], output_of(i)])
    path = tmp_path / "tickets.csv"
    path.write_text(text.getvalue())
    return path


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def start_in_spanish_on_a_phone(browser, live_server, url: str, screenshot) -> None:
    """The same start page at a phone's width: no sideways scroll, and the settings only a
    split, a sample or a comparison uses show only once it is chosen (CSS alone)."""
    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="es-ES")
    small = phone.new_page()
    try:
        log_in(small, live_server, "alice", "alice-pass-123", language="es")
        small.goto(url.replace("/en/", "/es/", 1))
        small.wait_for_selector("#start-evaluation")
        assert small.get_attribute("html", "lang") == "es"
        assert not small.is_visible(".split-settings")
        assert small.is_visible("input[name=sample]")
        assert not small.is_visible("select[name=second_version]")
        assert no_horizontal_scroll(small)
        screenshot(small, "evaluation-es-phone-start")
        small.check("input[name=split][value=train]")
        small.check("input[name=count][value=every]")
        small.check("input[name=second][value=compare]")
        assert small.is_visible(".split-settings")
        assert not small.is_visible("input[name=sample]")
        assert small.is_visible("select[name=second_version]")
        assert no_horizontal_scroll(small)
    finally:
        phone.close()


def test_a_metric_evaluated_from_the_playground_reads_in_english_and_hindi(
    page, browser, live_server, django_user_model, celery_worker_process, screenshot, tmp_path
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="ticket labels", starter="exact_match")
    metric_services.metric_save(metric, source=LABEL_METRIC)
    log_in(page, live_server, "alice", "alice-pass-123")

    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.click("#evaluate-metric")
    page.set_input_files("input[name=file]", str(upload_file(tmp_path)))
    page.click("#upload-dataset")
    page.wait_for_selector("#start-evaluation")
    # Guessed from the names: question is the input, label the expected value, output
    # the recorded outputs.
    assert page.input_value("select[name=recorded_column]") == "output"
    screenshot(page, "evaluation-en-1-start")
    start_in_spanish_on_a_phone(browser, live_server, page.url, screenshot)
    page.click("#start-evaluation")
    page.wait_for_selector("#scores .histogram-chart", timeout=90_000)
    evaluation = Evaluation.objects.get(owner=owner)
    assert evaluation.status == Evaluation.Status.DONE and evaluation.done == ROWS

    # What the page says is what the rows hold: 11 errors (KeyError), one not a pair.
    failures = page.inner_text("#failures")
    assert "KeyError" in failures and "11" in failures
    # The verdict above the results counts every case, in red, with the largest group's
    # problem under it.
    assert page.inner_text("#evaluation-verdict") == f"12 of {ROWS} cases failed"
    assert page.locator("#evaluation-verdict .verdict.bad").count() == 1
    bars = page.locator("#scores .histogram-chart rect.chart-bar").count()
    assert bars == len(evaluation.summary["score"]["bins"])
    assert no_horizontal_scroll(page)
    screenshot(page, "evaluation-en-2-results")

    page.goto(f"{live_server.url}/en/evaluations/{evaluation.pk}/cases/?invalid=1")
    rows = page.locator("table.cases tbody tr")
    assert rows.count() == 12  # 11 errors and the one that is not a pair
    screenshot(page, "evaluation-en-3-invalid-cases")

    page.goto(f"{live_server.url}/hi/evaluations/{evaluation.pk}/")
    page.wait_for_selector("#scores .histogram-chart")
    assert page.get_attribute("html", "lang") == "hi"
    assert page.inner_text("#evaluation-verdict") == f"{ROWS} में से 12 केस विफल रहे"
    assert no_horizontal_scroll(page)
    screenshot(page, "evaluation-hi-results")

    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="hi-IN")
    small = phone.new_page()
    try:
        log_in(small, live_server, "alice", "alice-pass-123", language="hi")
        small.goto(f"{live_server.url}/hi/evaluations/{evaluation.pk}/")
        small.wait_for_selector("#scores .histogram-chart")
        assert no_horizontal_scroll(small)
        screenshot(small, "evaluation-hi-phone-results")
        # Spanish has the longest labels: the summaries' terms wrap rather than widen it.
        small.goto(f"{live_server.url}/es/evaluations/{evaluation.pk}/")
        small.wait_for_selector("#feedback dl.summary")
        assert no_horizontal_scroll(small)
        screenshot(small, "evaluation-es-phone-results")
    finally:
        phone.close()
