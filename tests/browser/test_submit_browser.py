"""In real Chromium, against a live server and a real worker: every step of the submit
wizard, from an empty draft to a queued run and its bundle."""

from __future__ import annotations

import io
import zipfile

import pytest

from evaluations.models import Evaluation
from metrics import services as metric_services
from runs.models import Run
from tests.browser.conftest import log_in
from tests.submissions.test_submit_wizard import CSV, LABEL_METRIC

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# A program whose llm() calls go to the task model (the fake provider of the session).
PROGRAM = """from skynet import llm


def run(artifact, input):
    answer = llm(artifact, input="Answer: " + input["question"])
    return answer.split()[0].lower()
"""


def set_code(page, name: str, text: str) -> None:
    page.wait_for_function(
        "name => document.querySelector(`textarea[name=${name}]`).skynetEditor", arg=name
    )
    page.evaluate(
        "([name, text]) => document.querySelector(`textarea[name=${name}]`).skynetEditor.setValue(text)",
        [name, text],
    )


def post(page, selector: str) -> None:
    """Click a button that posts with htmx and wait until the answer is swapped in."""
    with page.expect_response(lambda response: response.request.method == "POST"):
        page.click(selector)
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling')")


def next_step(page, step: str) -> None:
    page.click("button[name=action][value=next]")
    page.wait_for_selector(f"#wizard[data-step={step}]")


def test_every_step_to_a_submitted_run(
    page,
    live_server,
    django_user_model,
    celery_worker_process,
    session_models,
    screenshot,
    tmp_path,
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="ticket labels", starter="exact_match")
    metric_services.metric_save(metric, source=LABEL_METRIC)
    log_in(page, live_server, "alice", "alice-pass-123")
    page.click("a.nav-link[href='/en/submit/']")
    page.click("#new-draft")

    # 1. Artifact: a Python program; a mistake first, shown next to its field.
    page.wait_for_selector("#wizard[data-step=artifact]")
    page.check("input[name=artifact_kind][value=python]")
    set_code(page, "program_source", "def answer(artifact, input):\n    return 1\n")
    page.fill("textarea[name=artifact_content]", "Label this support ticket.")
    page.click("button[name=action][value=next]")
    page.wait_for_selector("#id_program_source_error")
    assert "does not define a function named run" in page.inner_text("#id_program_source_error")
    screenshot(page, "submit-en-1-artifact-error")
    set_code(page, "program_source", PROGRAM)
    next_step(page, "dataset")
    assert page.url.endswith("/dataset/")  # htmx pushed the step's own URL

    # 2. Dataset: upload, preview, roles, splits.
    path = tmp_path / "tickets.csv"
    path.write_text(CSV)
    page.set_input_files("input[name=file]", str(path))
    page.click(".upload-form button[type=submit]")
    page.wait_for_selector("table.preview")
    assert "10 rows" in page.inner_text(".dataset-meta")
    assert page.input_value("select[data-column=label]") == "output"
    assert page.input_value("select[data-column=ticket_id]") == "ignore"
    page.fill("input[name=train_percent]", "50")
    post(page, "button[name=action][value=save]")
    page.wait_for_selector("#id_train_percent_error")
    assert page.locator("#split-counts").count() == 0
    page.fill("input[name=train_percent]", "60")
    page.fill("input[name=validation_percent]", "20")
    page.fill("input[name=test_percent]", "20")
    post(page, "button[name=action][value=save]")
    page.wait_for_selector("#split-counts")
    assert "train 6" in page.inner_text("#split-counts").replace("\n", " ")
    screenshot(page, "submit-en-2-dataset")
    next_step(page, "metric")

    # Back and forward again: nothing is lost.
    page.click("button[name=action][value=back]")
    page.wait_for_selector("#wizard[data-step=dataset]")
    assert page.input_value("input[name=train_percent]") == "60"
    next_step(page, "metric")

    # 3. Metric: written inline, it is diagnosed while typed; then the saved version.
    page.check("input[name=metric_mode][value=inline]")
    set_code(page, "inline_source", "def score(input):\n    return 1\n")
    page.wait_for_selector(
        ".field-inline_source .cm-lint-marker-error, .field-inline_source .cm-lintRange-error"
    )
    page.check("input[name=metric_mode][value=saved]")
    assert not page.is_visible(".field-inline_source")
    page.select_option("select[name=metric_version]", value=str(metric.latest_version.pk))
    assert "Version 2: not checked" in page.inner_text("optgroup[label='ticket labels']")
    next_step(page, "models")

    # 4. Models and engine.
    page.select_option("select[name=task_model]", "openai/test-gpt")
    page.select_option("select[name=reflection_model]", "openai/test-gpt")
    page.fill("input[name=budget]", "400")
    screenshot(page, "submit-en-4-models")
    next_step(page, "check")

    # 5. The check: Next stays shut until it passes, then opens by itself.
    assert page.is_disabled("#to-review")
    page.click("#run-check")
    page.wait_for_selector("#check.status-passed", timeout=90_000)
    page.wait_for_selector("a#to-review")
    assert page.locator("table.cases tbody tr.case-valid").count() == 3
    assert "run():" in page.inner_text("table.cases")
    screenshot(page, "submit-en-5-check")

    # The whole dataset, each case run through the program and its task model first.
    page.click("#evaluate-draft")
    page.wait_for_selector("#start-evaluation")
    page.check("input[name=split][value=all]")
    page.click("#start-evaluation")
    page.wait_for_selector("#scores .histogram-chart", timeout=90_000)
    evaluation = Evaluation.objects.get()
    assert evaluation.done == 10 and evaluation.summary["cost"]["task_usd_total"] > 0
    screenshot(page, "submit-en-5b-evaluation")
    page.goto(f"{live_server.url}/en/submit/{evaluation.draft_id}/check/")
    page.wait_for_selector("a#to-review")
    page.click("a#to-review")

    # 6. Review and submit.
    page.wait_for_selector("dl.summary")
    summary = page.inner_text("dl.summary")
    assert "tickets.csv" in summary and "400 metric calls" in summary and "GEPA" in summary
    with page.expect_download() as download:
        page.click("a[href$='bundle.zip']")
    names = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read())).namelist()
    assert "metric.py" in names and "run.json" in names
    # The projection from that evaluation: task model measured, reflection priced.
    projection = page.inner_text("#projection")
    assert f"From evaluation {evaluation.pk}, of 10 cases." in projection
    assert "$" in projection
    screenshot(page, "submit-en-6-review")
    page.click("#submit-run")
    page.wait_for_selector("#run-status")
    # The test worker runs runs too: the live page may already show it claimed.
    assert page.inner_text("#run-status") in ("Queued", "Running", "Finished")
    run = Run.objects.get()
    assert page.url.endswith(f"/en/runs/{run.pk}/")
    assert run.config["budget"] == {"metric_calls": 400, "usd": 5.0}
    screenshot(page, "submit-en-run")


def test_a_wizard_step_in_hindi(page, live_server, django_user_model, screenshot):
    django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    log_in(page, live_server, "alice", "alice-pass-123", language="hi")
    page.goto(f"{live_server.url}/hi/submit/")
    page.click("#new-draft")
    page.wait_for_selector("#wizard[data-step=artifact]")
    page.check("input[name=artifact_kind][value=prompt]")
    page.click("button[name=action][value=next]")
    page.wait_for_selector("#id_artifact_content_error")
    error = page.inner_text("#id_artifact_content_error")
    assert any("\u0900" <= ch <= "\u097f" for ch in error), error  # Devanagari
    screenshot(page, "submit-hi-1-artifact-error")
