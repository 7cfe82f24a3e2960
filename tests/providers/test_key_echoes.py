"""A provider that echoes the key in its errors, in every form: what make_llm_handler (and
the feedback review) hands on is the status, the provider's code and a scrubbed message."""

from __future__ import annotations

import pytest

from providers.budget import Budget, Usage
from providers.catalogue import parse_catalogue
from providers.clients import MAX_MESSAGE_CHARS, ProviderError
from providers.gateway import make_llm_handler
from providers.review import review_feedback
from tests.providers.conftest import FAST_RETRY, PLENTY, TEST_CATALOGUE
from tests.providers.echoes import KEY, echoes, leaked, scrubbed
from tests.providers.fakes import Reply, anthropic_error, openai_error

FORMS = echoes()
OPENAI_401 = (
    "Incorrect API key provided: {echo}. You can find your API key at "
    "https://platform.openai.com/account/api-keys."
)
ANTHROPIC_400 = "x-api-key: header {echo} is malformed"
OPENAI_500 = "The server had an error while processing key {echo}; retry your request."


@pytest.fixture
def keyed(provider):
    """The fake provider and a catalogue whose OpenAI and Anthropic key is KEY."""
    provider.openai_key = provider.anthropic_key = KEY
    env = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": f"{provider.url}/v1",
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": provider.url,
    }
    return provider, parse_catalogue(TEST_CATALOGUE.replace("{base}", provider.url), env)


def ask(catalogue, model_id: str) -> dict:
    model = catalogue.get(model_id)
    handle = make_llm_handler(
        model,
        env=catalogue.env,
        budget=Budget(PLENTY),
        meter=Usage(),
        timeout_s=2.0,
        retry=FAST_RETRY,
    )
    return handle({"instructions": "Grade.", "input": "Answer: Paris"})


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_401_echoing_the_key(name, keyed):
    provider, catalogue = keyed
    echo = FORMS[name]
    body = openai_error(OPENAI_401.format(echo=echo), code="invalid_api_key")
    provider.queue(Reply(401, body))
    answer = ask(catalogue, "openai/test-gpt")
    assert answer == {
        "error": "unauthorized",
        "message": "HTTP 401 invalid_api_key: " + OPENAI_401.format(echo=scrubbed(echo)),
    }
    assert leaked(answer["message"]) == []


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_400_echoing_the_key(name, keyed):
    provider, catalogue = keyed
    echo = FORMS[name]
    provider.queue(Reply(400, anthropic_error(ANTHROPIC_400.format(echo=echo))))
    answer = ask(catalogue, "anthropic/test-claude")
    assert answer == {
        "error": "bad_request",
        "message": "HTTP 400 invalid_request_error: " + ANTHROPIC_400.format(echo=scrubbed(echo)),
    }
    assert leaked(answer["message"]) == []


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_500_echoing_the_key(name, keyed):
    provider, catalogue = keyed
    echo = FORMS[name]
    body = openai_error(OPENAI_500.format(echo=echo), "server_error")
    provider.queue(*[Reply(500, body)] * 3)
    answer = ask(catalogue, "openai/test-gpt")
    assert answer == {
        "error": "server_error",
        "message": "HTTP 500 server_error: " + OPENAI_500.format(echo=scrubbed(echo)),
    }
    assert leaked(answer["message"]) == [] and len(provider.requests) == 3


def test_an_html_error_page_echoing_the_key(keyed):
    provider, catalogue = keyed
    page = f"<html><p>upstream refused Authorization: Bearer {KEY}</p></html>".encode()
    provider.queue(*[Reply(502, page)] * 3)
    answer = ask(catalogue, "openai/test-gpt")
    assert (
        answer["message"]
        == "HTTP 502: <html><p>upstream refused Authorization: Bearer ***</p></html>"
    )


def test_a_reply_that_is_not_json_echoing_the_key(keyed):
    provider, catalogue = keyed
    provider.queue(Reply(200, f"debug: x-api-key {FORMS['masked_stars']} accepted".encode()))
    answer = ask(catalogue, "openai/test-gpt")
    assert answer == {
        "error": "bad_response",
        "message": "the reply is not JSON: debug: x-api-key *** accepted",
    }


def test_a_provider_code_that_is_not_a_plain_identifier_is_left_out(keyed):
    provider, catalogue = keyed
    provider.queue(
        Reply(401, openai_error("Bad key.", code=KEY.replace("~", ""))),
        Reply(400, openai_error("Bad request.", code="not an identifier")),
    )
    assert ask(catalogue, "openai/test-gpt")["message"] == "HTTP 401: Bad key."
    assert ask(catalogue, "openai/test-gpt")["message"] == "HTTP 400: Bad request."


@pytest.mark.parametrize(
    "name", ["whole", "masked_ellipsis", "separated_space", "basic_2_standard_padded"]
)
def test_a_long_message_is_capped_and_a_key_across_the_cap_is_gone(name, keyed):
    provider, catalogue = keyed
    echo = FORMS[name]
    # The echo starts a few characters before the cap and ends after it.
    lead = "HTTP 400 invalid_request_error: "
    filler = "word " * ((MAX_MESSAGE_CHARS - len(lead) - 10) // 5)
    provider.queue(Reply(400, openai_error(filler + echo + " and more" * 2000)))
    message = ask(catalogue, "openai/test-gpt")["message"]
    assert len(message) <= MAX_MESSAGE_CHARS
    assert message.startswith(lead + "word word")
    assert leaked(message) == [] and not message.rstrip("*").endswith(echo[:3])


def test_a_huge_message_of_echoes_leaks_nothing(keyed):
    provider, catalogue = keyed
    forms = list(FORMS.values())
    text = " ".join(forms[i % len(forms)] for i in range(5000))  # about 250 000 characters
    provider.queue(Reply(400, openai_error(text)))
    message = ask(catalogue, "openai/test-gpt")["message"]
    assert len(message) <= MAX_MESSAGE_CHARS and leaked(message) == []
    assert set(message.removeprefix("HTTP 400 invalid_request_error: ").split()) <= {
        "***",
        "Basic",
        "**",
        "*",
    }


def test_the_review_gets_the_scrubbed_message(keyed):
    provider, catalogue = keyed
    echo = FORMS["masked_openai"]
    provider.queue(Reply(401, openai_error(OPENAI_401.format(echo=echo), code="invalid_api_key")))
    with pytest.raises(ProviderError) as caught:
        review_feedback(
            catalogue.get("openai/test-gpt"), input="q", output="a", expected=None,
            score=0.0, feedback="Wrong.", language="en", env=catalogue.env,
            timeout_s=2.0, retry=FAST_RETRY,
        )  # fmt: skip
    assert caught.value.code == "unauthorized"
    assert caught.value.message == "HTTP 401 invalid_api_key: " + OPENAI_401.format(echo="***")


def test_a_huge_message_of_blanks(keyed):
    provider, catalogue = keyed
    provider.queue(Reply(400, openai_error(" " * 20_000 + KEY)))
    assert ask(catalogue, "openai/test-gpt")["message"] == "HTTP 400 invalid_request_error"
