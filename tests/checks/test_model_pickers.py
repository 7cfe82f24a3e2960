"""Metric and reflection model pickers, and llm() answered by the picked model."""

from __future__ import annotations

import pytest

from checks import execution
from checks import services as check_services
from checks.models import Check
from jobs import model_choices
from metrics import services as metric_services
from tests.metrics.test_playground import editor_data
from tests.providers.conftest import JUDGE_METRIC, OPENAI_KEY, TEST_CATALOGUE

pytestmark = pytest.mark.django_db


@pytest.fixture
def models(provider, settings, monkeypatch, tmp_path):
    """A catalogue file whose OpenAI model is configured and whose Anthropic one is not."""
    path = tmp_path / "catalogue.toml"
    path.write_text(TEST_CATALOGUE.replace("{base}", provider.url))
    settings.MODEL_CATALOGUE = str(path)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{provider.url}/v1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model_choices.catalogue.cache_clear()
    yield provider
    model_choices.catalogue.cache_clear()


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(owner=owner, name="judge", starter="model_as_judge")


def test_pickers_offer_configured_models_and_explain_the_others(owner_client, metric, models):
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert 'name="reflection_model"' in body and 'name="metric_model"' in body
    assert "Same as the reflection model" in body
    assert '<option value="openai/test-gpt">Test GPT (openai/test-gpt)</option>' in body
    assert (
        '<option value="anthropic/test-claude" disabled>Test Claude (anthropic/test-claude): '
        "not configured (set ANTHROPIC_API_KEY)</option>"
    ) in body


def test_choices_are_saved_with_the_metric_and_pinned_on_the_check(owner_client, metric, models):
    data = editor_data(
        metric.latest_version.source,
        action="run",
        reflection_model="openai/test-gpt",
        metric_model="local/free",
    )
    owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    metric.refresh_from_db()
    assert (metric.reflection_model, metric.metric_model) == ("openai/test-gpt", "local/free")
    check = Check.objects.get()
    assert (check.reflection_model, check.metric_model) == ("openai/test-gpt", "local/free")
    page = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert '<option value="local/free" selected>' in page


def test_a_model_that_is_not_configured_cannot_be_picked(owner_client, metric, models):
    data = editor_data(metric.latest_version.source, reflection_model="anthropic/test-claude")
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    assert response.status_code == 400
    assert (
        "anthropic/test-claude is not configured: set the environment variable "
        "ANTHROPIC_API_KEY." in response.content.decode()
    )
    metric.refresh_from_db()
    assert metric.reflection_model == ""


def _judge_check(owner, metric, **models) -> Check:
    cases = [
        {"input": {"question": "What is the capital of France?"}, "output": answer}
        for answer in ("Paris", "Lyon", "Paris")
    ]
    check = check_services.check_create(
        owner=owner,
        source=JUDGE_METRIC,
        cases=cases,
        timeout_s=20,
        metric_version=metric.latest_version,
        **models,
    )
    execution.execute_check(check.pk)
    check.refresh_from_db()
    return check


def test_the_metric_uses_the_reflection_model_when_no_metric_model_is_picked(
    owner, owner_client, metric, models
):
    check = _judge_check(owner, metric, reflection_model="openai/test-gpt")
    assert check.status == Check.Status.PASSED
    rows = check.result["cases"]
    assert [row["score"] for row in rows] == [1.0, 0.0, 1.0]
    assert rows[1]["feedback"].startswith("FAIL The capital of France is Paris")
    assert rows[0]["usage"]["model_calls"] == 1
    assert len(models.requests) == 3
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "FAIL The capital of France is Paris" in body


def test_a_pick_that_stopped_working_reaches_the_metric_as_a_model_error(
    owner, metric, models, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")
    model_choices.catalogue.cache_clear()
    check = _judge_check(owner, metric, metric_model="openai/test-gpt")
    assert check.status == Check.Status.FAILED
    row = check.result["cases"][0]
    assert row["problem"] == "model_error"
    assert row["params"]["code"] == "not_configured"
    assert models.requests == []


def test_review_my_feedback_shows_the_reflection_models_opinion(
    owner, owner_client, metric, models, django_capture_on_commit_callbacks
):
    check = _judge_check(owner, metric, reflection_model="openai/test-gpt")
    page = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "Review my feedback" in page
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(
            f"/en/checks/{check.pk}/cases/1/review/", HTTP_HX_REQUEST="true"
        )
    assert "Asking the reflection model" in response.content.decode()
    review = check.reviews.get()
    execution.execute_review(review.pk)  # what the worker's task does
    poll = owner_client.get(f"/en/checks/{check.pk}/reviews/{review.pk}/", HTTP_HX_REQUEST="true")
    assert poll.status_code == 286
    body = poll.content.decode()
    assert "The reflection model's opinion (openai/test-gpt), not a rule:" in body
    sent = models.requests[-1].user
    assert "FAIL The capital of France is Paris" in sent  # the feedback under review
    assert "Lyon" in sent


def test_review_needs_a_reflection_model(owner, owner_client, metric, models):
    check = _judge_check(owner, metric, metric_model="openai/test-gpt")
    metric.reflection_model = ""
    metric.save()
    response = owner_client.post(f"/en/checks/{check.pk}/cases/0/review/", HTTP_HX_REQUEST="true")
    assert "Pick a reflection model first" in response.content.decode()
    assert check.reviews.count() == 0


def test_another_users_review_is_404(client, outsider, owner, metric, models):
    check = _judge_check(owner, metric, reflection_model="openai/test-gpt")
    client.force_login(outsider)
    assert client.post(f"/en/checks/{check.pk}/cases/0/review/").status_code == 404


def test_a_review_is_held_to_one_checks_model_budget(
    owner, owner_client, metric, models, settings, django_capture_on_commit_callbacks
):
    check = _judge_check(owner, metric, reflection_model="openai/test-gpt")
    sent_before = len(models.requests)
    settings.CHECK_MAX_MODEL_TOKENS = 50  # far less than the review's prompt
    with django_capture_on_commit_callbacks(execute=False):
        owner_client.post(f"/en/checks/{check.pk}/cases/1/review/", HTTP_HX_REQUEST="true")
    review = check.reviews.get()
    execution.execute_review(review.pk)
    review.refresh_from_db()
    assert (review.status, review.error_code) == ("failed", "review_over_budget")
    assert len(models.requests) == sent_before  # refused before any request was made
    for language, words in (
        ("en", "This review would go over the model budget of one check"),
        ("es", "Esta revisión superaría el presupuesto de modelo"),
        ("hi", "यह समीक्षा एक जाँच के मॉडल बजट से आगे"),
    ):
        poll = owner_client.get(
            f"/{language}/checks/{check.pk}/reviews/{review.pk}/", HTTP_HX_REQUEST="true"
        )
        assert words in poll.content.decode()


def test_feedback_reviews_are_limited_per_user(
    owner, owner_client, metric, models, settings, django_capture_on_commit_callbacks
):
    check = _judge_check(owner, metric, reflection_model="openai/test-gpt")
    settings.REVIEW_RATE_PER_MINUTE = 2
    url = f"/en/checks/{check.pk}/cases/1/review/"
    with django_capture_on_commit_callbacks(execute=False):
        answers = [owner_client.post(url, HTTP_HX_REQUEST="true") for _ in range(3)]
    assert check.reviews.count() == 2
    assert "You have asked for 2 feedback reviews in the last minute." in (
        answers[-1].content.decode()
    )
