"""In real Chromium, with the real worker: a DSPy GEPA metric run as it is fails and is
offered Convert to the contract; the review shows the diff (on a laptop and a phone, in
every language, without scrolling sideways); accepting saves it and the check passes. The
new-metric page does the same from a pasted metric."""

from __future__ import annotations

import pytest

from metrics import services as metric_services
from metrics.models import Metric
from tests.browser.conftest import log_in
from tests.browser.test_small_screens_browser import LAPTOP, PHONE, overflow, too_wide

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# A DSPy GEPA metric over the default sample cases' columns (the label).
DSPY_METRIC = """import dspy


def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
    # The label the program chose, against the one expected.
    if pred.label == example.label:
        return dspy.Prediction(score=1.0, feedback=f"Correct: {example.label!r}.")
    return dspy.Prediction(score=0.0, feedback=f"Expected {example.label!r}, got {pred.label!r}.")
"""


def test_a_dspy_metric_is_converted_reviewed_and_then_passes(
    page, live_server, django_user_model, celery_worker_process, screenshot
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(
        owner=owner, name="labels", starter="exact_match", source=DSPY_METRIC
    )
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    page.click("#run-check")
    page.wait_for_selector("#check.status-failed", timeout=60_000)
    assert "looks like a DSPy metric" in page.inner_text("#check .stage-culprit")
    screenshot(page, "convert-en-offered")
    page.click("#convert-metric")
    page.wait_for_selector("#accept-conversion")
    # One column: the removed lines, then those that replace them.
    assert page.locator("table.diff-table tbody tr.del").count() >= 5
    assert page.locator("table.diff-table tbody tr.add").count() >= 5

    for language in ("en", "es", "hi"):
        page.goto(f"{live_server.url}/{language}/metrics/{metric.pk}/convert/")
        for name, size in (("laptop", LAPTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            assert overflow(page) <= 0, f"{language} {name}: scrolls sideways ({too_wide(page)})"
            screenshot(page, f"convert-{name}-{language}-review")
    page.set_viewport_size(LAPTOP)

    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/convert/")
    page.click("#accept-conversion")
    page.wait_for_selector("#check.status-passed", timeout=60_000)
    assert page.locator("table.cases tbody tr.case-valid").count() == 3
    assert "Expected 'bug', got 'other'." in page.inner_text("table.cases")
    screenshot(page, "convert-en-passed")
    assert metric.versions.count() == 2
    assert "def score(input, output, expected=None):" in metric.latest_version.source


def test_a_pasted_metric_is_reviewed_before_it_is_created(
    page, live_server, django_user_model, screenshot
):
    django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    log_in(page, live_server, "alice", "alice-pass-123", language="es")
    page.goto(f"{live_server.url}/es/metrics/new/")
    page.click("#import-metric")
    page.fill("input[name=name]", "etiquetas")
    page.fill("textarea[name=source]", DSPY_METRIC)
    page.click("button[value=review]")
    page.wait_for_selector("#create-imported")
    assert "Escrita para DSPy" in page.inner_text("#conversion")
    for name, size in (("laptop", LAPTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        assert overflow(page) <= 0, f"{name}: scrolls sideways ({too_wide(page)})"
        screenshot(page, f"import-{name}-es-review")
    page.click("#create-imported")
    page.wait_for_selector(".cm-editor")
    metric = Metric.objects.get(name="etiquetas")
    assert [v.number for v in metric.versions.order_by("number")] == [1, 2]


RETURNS_A_PREDICTION = """import dspy


def score(input, output, expected=None):
    ok = output == expected["label"]
    feedback = "Correct." if ok else f"Expected {expected['label']!r}, got {output!r}."
    return dspy.Prediction(score=float(ok), feedback=feedback)
"""


def test_what_came_back_and_its_fix_fit_a_phone_in_every_language(
    page, live_server, django_user_model, screenshot
):
    from checks.models import Check
    from contract.engine import run_check
    from jobs import sandbox_pool

    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(
        owner=owner, name="labels", starter="exact_match", source=RETURNS_A_PREDICTION
    )
    result = run_check(
        RETURNS_A_PREDICTION, timeout_s=20, sandbox_config=sandbox_pool.base_config()
    )
    check = Check.objects.create(
        owner=owner,
        source=RETURNS_A_PREDICTION,
        metric_version=metric.latest_version,
        status="failed",
        result=result.to_dict(),
    )
    log_in(page, live_server, "alice", "alice-pass-123")
    for language in ("en", "es", "hi"):
        page.goto(f"{live_server.url}/{language}/checks/{check.pk}/")
        for name, size in (("laptop", LAPTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            assert overflow(page) <= 0, f"{language} {name}: scrolls sideways ({too_wide(page)})"
            assert page.locator("tr.case-invalid .return-example code").count() == 3
            screenshot(page, f"shape-{name}-{language}-check")
    text = page.inner_text("tr.case-invalid .return-example")
    assert "return 0.0, {\"feedback\": \"Expected 'bug', got 'other'.\"}" in page.inner_text(
        "#case-2 .return-example"
    )
    assert text
