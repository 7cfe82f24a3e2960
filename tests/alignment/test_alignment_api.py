"""POST /api/v1/evaluations/{id}/align and POST /api/v1/runs/{id}/accept-prompt: what the
pages do, refused in their words, and a 404 for anyone else's evaluation or run."""

from __future__ import annotations

import pytest

from alignment.models import Alignment
from metrics.models import MetricVersion
from tests.alignment import world
from tests.alignment.conftest import BETTER, finished_run, hand_evaluation
from tests.api.conftest import Api, make_token

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _api_counts(signup_counts):
    """API requests are counted per token in the test Redis, in this test's own keys."""
    return signup_counts


@pytest.fixture
def api(owner):
    return Api(make_token(owner))


@pytest.fixture
def outsider_api(outsider):
    return Api(make_token(outsider))


def test_align_starts_it_as_the_page_does(api, evaluation, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = api.post(f"/evaluations/{evaluation.pk}/align", {"budget": 60})
    assert response.status_code == 201, response.json()
    body = response.json()
    alignment = Alignment.objects.get()
    assert body["id"] == alignment.pk and body["draft_id"] == alignment.draft_id
    assert (
        body["constant"] == "JUDGE_PROMPT" and body["seed_version"] == alignment.seed_version.number
    )
    assert body["splits"] == {"train": 18, "validation": 6, "test": 6}
    assert body["check_id"] == alignment.draft.contract_check_id and body["check_refused"] is None
    assert body["accepted_version"] is None and len(sent) == 1
    assert alignment.draft.budget == 60


def test_an_empty_body_takes_the_default_budget(api, evaluation):
    response = api.post(f"/evaluations/{evaluation.pk}/align")
    assert response.status_code == 201, response.json()
    assert Alignment.objects.get().draft.budget == 150


def test_align_refuses_in_the_pages_words(api, owner, judge_version, pending_translations):
    few = hand_evaluation(owner, judge_version, labelled=3)
    response = api.post(f"/evaluations/{few.pk}/align", {})
    assert response.status_code == 422
    assert response.json()["code"] == "too_few_labelled"
    assert response.json()["message"] == (
        "Only 3 rows have a person's judgement: aligning a judge needs at least 20."
    )
    evaluation = hand_evaluation(owner, judge_version)
    response = api.post(f"/evaluations/{evaluation.pk}/align", {"budget": 0})
    assert response.status_code == 422 and response.json()["field"] == "budget"
    response = api.post(f"/evaluations/{evaluation.pk}/align", {"budgets": 10})
    assert response.status_code == 422 and response.json()["code"] == "unknown_field"
    spanish = Api(api.token, language="es")
    response = spanish.post(f"/evaluations/{few.pk}/align", {})
    assert response.json()["code"] == "too_few_labelled"
    assert response.json()["message"].startswith("Solo 3 filas tienen el juicio de una persona")
    assert not Alignment.objects.exists()


def test_accept_prompt_saves_and_compares_once(api, evaluation, judge_version):
    assert api.post(f"/evaluations/{evaluation.pk}/align", {}).status_code == 201
    run = finished_run(Alignment.objects.get())
    response = api.post(f"/runs/{run.pk}/accept-prompt")
    assert response.status_code == 202, response.json()
    body = response.json()
    alignment = Alignment.objects.get()
    assert body["alignment"]["accepted_version"] == alignment.accepted_version.number
    assert body["alignment"]["comparison_id"] == body["evaluation"]["id"] == alignment.comparison_id
    assert body["evaluation"]["status"] == "queued"
    assert BETTER in alignment.accepted_version.source
    again = api.post(f"/runs/{run.pk}/accept-prompt")
    assert again.status_code == 409 and again.json()["code"] == "already_accepted"
    assert again.json()["message"] == "This run's best prompt was accepted already."
    assert (
        MetricVersion.objects.filter(metric=judge_version.metric).count()
        == judge_version.number + 1
    )


def test_anyone_elses_evaluation_or_run_is_not_found(api, outsider_api, evaluation):
    assert outsider_api.post(f"/evaluations/{evaluation.pk}/align", {}).status_code == 404
    assert api.post(f"/evaluations/{evaluation.pk}/align", {}).status_code == 201
    run = finished_run(Alignment.objects.get())
    response = outsider_api.post(f"/runs/{run.pk}/accept-prompt")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert Alignment.objects.get().accepted_at is None
    assert world.JUDGE_PROMPT in Alignment.objects.get().draft.artifact_content
