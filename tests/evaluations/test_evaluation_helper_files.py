"""An evaluation of a metric version that carries helper modules: the worker scores every
case with them importable beside metric.py, and the second scoring with its own version's."""

from __future__ import annotations

import pytest

from evaluations.models import Evaluation, EvaluationCase
from metrics import services as metric_services
from tests.evaluations.evaluation_data import make_dataset
from tests.evaluations.test_evaluation_run import run

pytestmark = pytest.mark.django_db

METRIC = """\
from grading.labels import grade


def score(input, output, expected=None):
    value = grade(output, expected["label"])
    return value, {"feedback": f"{output!r} against {expected['label']!r}: {value}."}
"""
RIGHT = {
    "grading/labels.py": "from .weights import RIGHT\n\n\ndef grade(output, label):\n"
    "    return RIGHT if output == label else 0.0\n",
    "grading/weights.py": "RIGHT = 1.0\n",
}
HALF = {**RIGHT, "grading/weights.py": "RIGHT = 0.5\n"}


def test_each_case_is_scored_with_the_versions_files_and_the_seconds_with_its_own(owner):
    metric = metric_services.metric_create(owner=owner, name="graded", starter="exact_match")
    first, _ = metric_services.metric_save(metric, source=METRIC, files=RIGHT)
    second, _ = metric_services.metric_save(metric, source=METRIC, files=HALF)
    dataset = make_dataset(owner, 8)
    evaluation = run(
        owner,
        dataset,
        source=METRIC,
        metric_version=first,
        second="compare",
        second_source=METRIC,
        second_version=second,
    )
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    right = [c for c in cases if c.status == "valid" and c.score == 1.0]
    assert [c.index for c in right] == [0, 3, 4, 7]  # the recorded output is the label
    assert {c.second_score for c in right} == {0.5}


def test_without_files_it_stops_at_once_naming_the_module(owner):
    dataset = make_dataset(owner, 8)
    evaluation = run(owner, dataset, source=METRIC)
    assert evaluation.status == Evaluation.Status.FAILED
    assert evaluation.failure == "load_failed"
    assert evaluation.failure_params["problem"] == "local_module_missing"
    assert evaluation.failure_params["params"]["module"] == "grading.labels"
