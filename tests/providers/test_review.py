"""review_feedback(): the reflection model judges a case's feedback, in the reader's language."""

from __future__ import annotations

import json

import pytest

from providers.budget import Budget, BudgetExceeded, Limits
from providers.clients import ProviderError
from providers.review import review_feedback
from tests.providers.conftest import FAST_RETRY
from tests.providers.fakes import Reply, anthropic_reply, openai_error, openai_reply

CASE = {
    "input": {"question": "The app crashes when I open settings."},
    "output": "other",
    "expected": {"label": "bug"},
    "score": 0.0,
    "feedback": "Wrong.",
}


@pytest.mark.parametrize(
    ("language", "name"), [("en", "English"), ("es", "Spanish"), ("hi", "Hindi")]
)
def test_the_review_asks_in_the_readers_language(language, name, provider, catalogue):
    provider.queue(
        Reply(body=anthropic_reply("1. No. 2. No. 3. Expected 'bug', got 'other'.", 400, 60))
    )
    text, usage = review_feedback(
        catalogue.get("anthropic/test-claude"),
        **CASE,
        language=language,
        env=catalogue.env,
        timeout_s=1.0,
        retry=FAST_RETRY,
    )
    assert text == "1. No. 2. No. 3. Expected 'bug', got 'other'."
    assert usage["model_calls"] == 1
    assert usage["cost_usd"] == pytest.approx(400 / 1e6 * 3 + 60 / 1e6 * 15)
    request = provider.requests[0]
    assert f"Answer in {name}" in request.system
    assert (
        "what is wrong" in request.system and "what a correct output looks like" in request.system
    )
    assert json.loads(request.user) == CASE


def test_a_provider_error_is_raised_with_its_message(provider, catalogue):
    provider.queue(Reply(404, openai_error("The model `gpt-test` does not exist.")))
    with pytest.raises(ProviderError) as caught:
        review_feedback(
            catalogue.get("openai/test-gpt"), **CASE, language="es", env=catalogue.env,
            timeout_s=1.0, retry=FAST_RETRY,
        )  # fmt: skip
    assert (caught.value.code, caught.value.message) == (
        "not_found",
        "HTTP 404 invalid_request_error: The model `gpt-test` does not exist.",
    )


def test_the_review_counts_against_a_budget(provider, catalogue):
    budget = Budget(Limits(max_calls=1, max_tokens=10**6, max_usd=1.0))
    provider.queue(Reply(body=openai_reply("Good feedback.", 10, 3)))
    model = catalogue.get("openai/test-gpt")
    kwargs = dict(CASE, language="en", env=catalogue.env, timeout_s=1.0, budget=budget)
    assert review_feedback(model, **kwargs)[0] == "Good feedback."
    with pytest.raises(BudgetExceeded):
        review_feedback(model, **kwargs)
    assert len(provider.requests) == 1


def test_an_unknown_language_is_refused(catalogue):
    with pytest.raises(ValueError):
        review_feedback(catalogue.get("openai/test-gpt"), **CASE, language="fr", env={})
