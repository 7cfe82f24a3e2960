"""POST /api/v1/evaluations with a person's judgement: "human" resolved from the column's
values, the scale and labels the request declares, refusals in the form's words, and the
agreement in the evaluation's document."""

from __future__ import annotations

import csv
import io

import pytest
from scipy import stats

from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation
from metrics import services as metric_services
from submissions.services import dataset_create

pytestmark = pytest.mark.django_db

GRADED = """
def score(input, output, expected=None):
    return min(1.0, len(output) / 20), {"feedback": f"{len(output)} characters"}
"""


def rows(n: int = 24):
    return [
        (f"q{i}", "a" * (1 + i % 19), 1 + i % 5, "too short" if i % 5 == 0 else "")
        for i in range(n)
    ]


@pytest.fixture
def dataset(owner):
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "output", "stars", "why"])
    out.writerows(rows())
    return dataset_create(owner=owner, filename="stars.csv", data=text.getvalue().encode())


@pytest.fixture
def metric(owner):
    metric = metric_services.metric_create(owner=owner, name="graded", starter="exact_match")
    metric_services.metric_save(metric, source=GRADED)
    return metric


def test_a_column_called_human_is_read_as_its_values_say(
    api, owner, metric, dataset, django_capture_on_commit_callbacks
):
    body = {
        "metric_id": metric.pk,
        "dataset_id": dataset.pk,
        "count": "every",
        "recorded_column": "output",
        "columns": {"stars": "human", "why": "human_note"},
        "human_scale": [1, 5],
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = api.post("/evaluations", body)
    assert response.status_code == 202, response.content
    evaluation = Evaluation.objects.get(owner=owner)
    assert evaluation.roles["stars"] == "human_score"
    assert evaluation.human == {
        "score_column": "stars",
        "note_column": "why",
        "scale": [1.0, 5.0],
        "threshold": 0.5,
    }
    execute_evaluation(evaluation.pk)
    done = api.get(f"/evaluations/{evaluation.pk}").json()
    human = done["summary"]["human"]
    people = [r[2] for r in rows()]
    scores = [min(1.0, len(r[1]) / 20) for r in rows()]
    assert human["first"]["spearman"]["value"] == pytest.approx(
        stats.spearmanr(people, scores).statistic
    )
    assert human["notes"] == 5


def test_refusals_are_the_forms_words(api, metric, dataset, django_capture_on_commit_callbacks):
    base = {"metric_id": metric.pk, "dataset_id": dataset.pk, "recorded_column": "output"}
    outside = api.post(
        "/evaluations", {**base, "columns": {"stars": "human_score"}, "human_scale": [1, 3]}
    )
    assert outside.status_code == 422
    assert "outside its scale of 1 to 3" in outside.content.decode()
    half = api.post("/evaluations", {**base, "columns": {"stars": "human"}, "human_scale": [1]})
    assert half.status_code == 422
    assert "Give both ends of the scale, or neither." in half.content.decode()
    assert not Evaluation.objects.exists()
