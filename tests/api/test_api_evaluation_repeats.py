"""POST /evaluations with `repeats`: each case scored 2 to 5 times, through the
playground's own form (its default, its limits, its words), and the evaluation, its
summary's noise and its cases' later scorings as the API answers them."""

from __future__ import annotations

import pytest
from django.utils import translation
from django.utils.translation import gettext

from evaluations import start_forms
from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation
from metrics import services as metric_services
from tests.api.conftest import Api, make_token
from tests.evaluations.evaluation_data import make_dataset

pytestmark = pytest.mark.django_db

RANDOM = """
import random

def score(input, output, expected=None):
    return random.random(), {"feedback": "drawn"}
"""


@pytest.fixture
def metric(owner):
    metric = metric_services.metric_create(owner=owner, name="noisy", starter="exact_match")
    metric_services.metric_save(metric, source=RANDOM)
    return metric


@pytest.fixture
def dataset(owner):
    return make_dataset(owner, 6)


def start(api: Api, callbacks, **body):
    with callbacks(execute=False):
        return api.post("/evaluations", body)


def test_repeats_scores_each_case_that_many_times_and_says_so(
    api, metric, dataset, django_capture_on_commit_callbacks
):
    response = start(
        api,
        django_capture_on_commit_callbacks,
        metric_id=metric.pk,
        dataset_id=dataset.pk,
        count="every",
        second="repeat",
        repeats=4,
    )
    assert response.status_code == 202, response.json()
    started = response.json()
    assert started["second"] == "repeat" and started["repeats"] == 4
    execute_evaluation(started["id"])
    evaluation = api.get(f"/evaluations/{started['id']}").json()
    assert evaluation["status"] == "done"
    noise = evaluation["summary"]["noise"]
    assert noise["k"] == 4 and noise["n"] == 6 and noise["flip_share"]["value"] == 1.0
    assert set(noise["mean"]) == {"value", "low", "high"}
    cases = api.get(f"/evaluations/{started['id']}/cases").json()["cases"]
    assert all(len(case["repeats"]) == 3 and case["differs"] for case in cases)
    assert all(case["second"]["score"] == case["repeats"][0]["score"] for case in cases)


def test_repeats_defaults_to_the_forms_three_and_means_nothing_without_repeat(
    api, metric, dataset, django_capture_on_commit_callbacks
):
    response = start(
        api,
        django_capture_on_commit_callbacks,
        metric_id=metric.pk,
        dataset_id=dataset.pk,
        second="repeat",
    )
    assert response.status_code == 202 and response.json()["repeats"] == 3
    Evaluation.objects.update(status=Evaluation.Status.DONE)
    once = start(
        api, django_capture_on_commit_callbacks, metric_id=metric.pk, dataset_id=dataset.pk
    )
    assert once.status_code == 202 and once.json()["repeats"] is None
    assert once.json()["summary"] is None


@pytest.mark.parametrize("times", [1, 6])
@pytest.mark.parametrize("language", ["en", "es"])
def test_fewer_than_two_or_more_than_five_are_the_forms_refusal(
    owner, metric, dataset, django_capture_on_commit_callbacks, times, language
):
    api = Api(make_token(owner), language=language)
    response = start(
        api,
        django_capture_on_commit_callbacks,
        metric_id=metric.pk,
        dataset_id=dataset.pk,
        second="repeat",
        repeats=times,
    )
    assert response.status_code == 422
    error = response.json()
    assert error["field"] == "repeats"
    with translation.override(language):
        refusal = gettext(start_forms.REPEATS_ERROR)
    assert refusal in error["message"]
    assert not Evaluation.objects.exists()
