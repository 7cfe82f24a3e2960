"""The review step's projection of the run's cost and time, from the draft's latest
finished evaluation (made here directly in the database), in English and Spanish; what
it says without one; and the projection.json the run's bundle keeps."""

from __future__ import annotations

import io
import json
import re
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from evaluations.models import Evaluation, EvaluationCase
from providers.projection import Measured, project
from runs.models import Run
from submissions.presenters import duration, projection_view, usd
from submissions.rules import draft_artifact, metric_source
from tests.providers.test_projection import FREE
from tests.submissions.test_submit_wizard import fill_to_check, run_check_now, url

pytestmark = pytest.mark.django_db

# The draft fill_to_check makes: budget 300, 10 rows split 60/20/20 (validation: 2
# rows), the task and reflection model openai/test-gpt ($2 in, $8 out per million
# tokens), no metric model (so the reflection model), a program with no artifact text.
#
# Calls: the seed's scoring takes the 2 validation rows, 298 are left.
#   every proposal kept: 3 + 3 + 2 = 8 an iteration, ceil(298 / 8) = 38, 2 + 38 * 8 = 306
#   none kept:           3 + 3 = 6 an iteration, ceil(298 / 6) = 50, 2 + 50 * 6 = 302
# Task model:   302 * $0.002 = $0.604 to 306 * $0.002 = $0.612  -> "$0.60 to $0.61"
# Metric model: 302 * $0.001 = $0.302 to 306 * $0.001 = $0.306  -> "$0.30 to $0.31"
# Reflection (the two cases below: 300 and 900 characters, mean 600; feedback mean 100,
# longest 400):
#   low prompt  (1000 + 0 + 3 * (600 + 100 + 80)) / 4 = 3340 / 4 = 835 tokens
#   low call    835 * $2/M + 400 * $8/M = $0.00487, 38 calls = $0.18506
#   high prompt (1000 + 3 * (900 + 400 + 80)) / 3 + 2000 = 3713.33 tokens
#   high call   3713.33 * $2/M + 2000 * $8/M = $0.0234267, 50 calls = $1.171333
#   -> "$0.19 to $1.17"
# Total: $0.604 + $0.302 + $0.18506 = $1.09106 to $0.612 + $0.306 + $1.171333 = $2.089333
# Time: 302 * 1.5 s = 453 s to 306 * 1.5 s = 459 s, both 8 minutes.
SUMMARY = {
    "version": 1,
    "cases": 2,
    "total": 2,
    "cost": {
        "task_usd_total": 0.004,
        "metric_usd_total": 0.002,
        "task_usd_per_case": 0.002,
        "metric_usd_per_case": 0.001,
        "model_calls_total": 4,
        "feedback_length_mean": 100.0,
        "feedback_length_max": 400,
    },
    "time": {
        "total_ms_mean": 1500.0,
        "total_ms_p50": 1500.0,
        "total_ms_p95": 1900.0,
        "metric_ms_mean": 300.0,
        "run_ms_mean": 1200.0,
    },
}


def _question(chars: int) -> dict:
    """A case's input whose JSON, with the output "bug" ('"bug"', 5), takes `chars`:
    '{"question": ""}' is 16 characters."""
    return {"question": "q" * (chars - 16 - 5)}


def ready_for_review(client, draft, saved_metric, capture):
    fill_to_check(client, draft, saved_metric)
    run_check_now(client, draft, capture)
    draft.refresh_from_db()
    return draft


def evaluate(draft, *, status=Evaluation.Status.DONE, finished_ago=0, **changes) -> Evaluation:
    """A finished evaluation of the draft as it is, as the worker would leave it."""
    fields = {
        "owner": draft.owner,
        "draft": draft,
        "source": metric_source(draft),
        "metric_version": draft.metric_version,
        "dataset": draft.dataset,
        "roles": draft.roles,
        "artifact": draft_artifact(draft).to_dict(),
        "task_model": draft.task_model,
        "reflection_model": draft.reflection_model,
        "metric_model": draft.metric_model,
        "status": status,
        "total": 2,
        "done": 2,
        "summary": SUMMARY if status == Evaluation.Status.DONE else None,
        "finished_at": timezone.now() - timedelta(minutes=finished_ago),
    }
    fields.update(changes)
    evaluation = Evaluation.objects.create(**fields)
    for index, chars in enumerate((300, 900)):
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=index,
            row=index,
            file_row=index + 2,
            status="valid",
            score=1.0,
            case={"input": _question(chars), "output": "bug", "expected": {"label": "bug"}},
        )
    return evaluation


def section(body: str) -> str:
    start = body.index('id="projection"')
    return body[start : body.index("</section>", start)]


def rows(part: str) -> dict[str, str]:
    """Each row of the projection table: its label and its cell's text."""
    found = {}
    for row in part.split("<tr")[2:]:
        label = row.split('<th scope="row">')[1].split("</th>")[0].strip()
        cell = row.split("<td>")[1].split("</td>")[0]
        found[label] = " ".join(re.sub(r"<[^>]+>", "", cell).split())
    return found


def test_the_review_step_projects_the_run_from_the_latest_evaluation(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluate(draft, finished_ago=10, summary={**SUMMARY, "cost": {}})  # an older one
    evaluate(draft, status=Evaluation.Status.FAILED)  # a failed one counts for nothing
    latest = evaluate(draft)
    part = section(owner_client.get(url(draft, "review")).content.decode())
    assert rows(part) == {
        "Task model": "$0.60 to $0.61",
        "Metric model": "$0.30 to $0.31",
        "Reflection model": "$0.19 to $1.17",
        "Total": "$1.09 to $2.09",
        "Run time": "8 minutes",
    }
    assert f"From evaluation {latest.pk}, of 2 cases." in part
    assert "Metric calls: 302 to 306. Reflection calls: 38 to 50." in part
    assert "one after another" in part
    assert 'id="projection-changed"' not in part


def test_the_projection_reads_in_spanish_with_spanish_numbers(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluate(draft)
    body = owner_client.get(f"/es/submit/{draft.pk}/review/").content.decode()
    found = rows(section(body))
    # The row labels are the review's own words for the models; amounts take a comma.
    assert "0,60" in found["Modelo de la tarea"] and "0,61" in found["Modelo de la tarea"]
    assert "0,19" in found["Modelo de reflexión"] and "1,17" in found["Modelo de reflexión"]
    assert "0,30" in found["Modelo de la métrica"]
    assert "$0.60" not in body


def test_a_part_measured_on_another_model_says_so_and_the_total_leaves_it_out(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluate(draft, task_model="anthropic/test-claude", source="def score(i, o): return 1.0\n")
    part = section(owner_client.get(url(draft, "review")).content.decode())
    found = rows(part)
    assert found["Task model"] == (
        "Not measured: the evaluation ran another model than this draft has now"
    )
    # $0.302 + $0.18506 = $0.48706 to $0.306 + $1.171333 = $1.477333
    assert found["Total"] == "$0.49 to $1.48 (not counting: Task model)"
    assert 'id="projection-changed"' in part  # its metric is not the draft's


def test_without_a_finished_evaluation_the_review_says_where_to_measure_it(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluate(draft, status=Evaluation.Status.RUNNING)
    part = section(owner_client.get(url(draft, "review")).content.decode())
    assert "No evaluation has measured this draft yet" in part
    assert f'href="/en/submit/{draft.pk}/evaluate/"' in part
    assert "<table" not in part


def test_the_bundle_keeps_the_projection_made_when_the_run_was_submitted(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluation_id = evaluate(draft).pk
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    run = Run.objects.get()
    Evaluation.objects.filter(pk=evaluation_id).delete()  # pinned at submit, kept after
    response = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    stored = json.loads(archive.read("projection.json"))
    assert stored == run.config["projection"]
    assert stored["evaluation"]["id"] == evaluation_id and stored["evaluation"]["cases"] == 2
    assert stored["engine"] == "gepa" and stored["budget_calls"] == 300
    assert stored["valset_size"] == 2
    assert stored["calls"] == {"low": 302, "high": 306}
    assert stored["iterations"] == {"low": 38, "high": 50}
    assert stored["task_usd"] == {"low": pytest.approx(0.604), "high": pytest.approx(0.612)}
    assert stored["metric_usd"] == {"low": pytest.approx(0.302), "high": pytest.approx(0.306)}
    assert stored["reflection_usd"] == {
        "low": pytest.approx(0.18506),
        "high": pytest.approx(1.171333),
    }
    assert stored["total_usd"] == {"low": pytest.approx(1.09106), "high": pytest.approx(2.089333)}
    assert stored["time_s"] == {"low": pytest.approx(453), "high": pytest.approx(459)}
    assert (
        stored["measured"]["case_chars_mean"] == 600 and stored["measured"]["case_chars_max"] == 900
    )
    assert stored["assumptions"]["reflection_minibatch"] == 3


def test_a_run_submitted_without_an_evaluation_says_so_in_its_bundle(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    response = owner_client.get(f"/en/submit/{draft.pk}/bundle.zip")
    stored = json.loads(zipfile.ZipFile(io.BytesIO(response.getvalue())).read("projection.json"))
    assert stored["evaluation"] is None
    assert stored["task_usd"] == {"reason": "no_evaluation"}
    assert stored["total_usd"] == {"reason": "no_evaluation"}
    assert stored["calls"] == {"low": 302, "high": 306}  # the budget's plan needs no measurement


def test_amounts_and_durations_read_in_the_readers_locale():
    with translation.override("en"):
        assert usd(0) == "$0.00"
        assert usd(0.00452) == "$0.0045"
        assert usd(0.0456) == "$0.046"
        assert usd(1234.5) == "$1,234.50"
        assert usd(0.00003) == "less than $0.0001"
        assert duration(90) == "90 seconds"
        assert duration(453) == "8 minutes"
        assert duration(3 * 3600) == "3 hours"
        assert duration(1) == "1 second"
    with translation.override("es"):
        assert "0,0045" in usd(0.00452)
        assert "1234,50" in usd(1234.5).replace("\xa0", "").replace(".", "")


def test_a_budget_the_validation_split_spends_and_an_oversized_prompt_are_said():
    measured = Measured(
        cases=1,
        task_usd_per_case=0.0,
        metric_usd_per_case=0.0,
        total_ms_mean=10.0,
        run_ms_mean=5.0,
        feedback_length_mean=10.0,
        feedback_length_max=30000,
        case_chars_mean=10.0,
        case_chars_max=10,
        task_model="local/free",
        metric_model="local/free",
    )
    data = project(
        measured,
        budget_calls=4,
        valset_size=5,
        engine="gepa",
        task_model="local/free",
        metric_model="local/free",
        reflection=FREE,
        reflection_id="local/free",
    ).to_dict()
    with translation.override("en"):
        view = projection_view({"evaluation": {"id": 1, "cases": 1}, **data})
    assert view["notes"] == [
        "The budget is no more than the 5 rows GEPA compares candidates on: scoring the "
        "starting candidate spends it, and no reflection call is left.",
        "At the high end, a reflection prompt would not fit in the reflection model's "
        "context window.",
    ]
    assert view["calls"] == "5" and view["iterations"] == "0"
    assert view["rows"][2] == {"label": "Reflection model", "value": "$0.00", "reason": ""}
