"""The provider clients over real HTTP: both wire formats, base URLs, retries, errors."""

from __future__ import annotations

import socket
import time

import pytest

from providers.clients import ProviderClient, ProviderError, RetryPolicy, base_url
from tests.providers.conftest import ANTHROPIC_KEY, FAST_RETRY, OPENAI_KEY
from tests.providers.fakes import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Reply,
    anthropic_error,
    anthropic_reply,
    openai_error,
    openai_reply,
)


@pytest.fixture
def client(catalogue):
    """client(model_id, **kw) -> a ProviderClient on the fake provider, closed after."""
    made = []

    def make(model_id: str = "openai/test-gpt", **kw):
        model = catalogue.resolve(model_id)
        kw.setdefault("retry", FAST_RETRY)
        kw.setdefault("timeout_s", 1.0)
        made.append(
            ProviderClient(model, api_key=catalogue.api_key(model), env=catalogue.env, **kw)
        )
        return made[-1]

    yield make
    for c in made:
        c.close()


def test_openai_chat_completions(provider, client):
    provider.queue(Reply(body=openai_reply("Hello.", 21, 3)))
    completion = client().complete("Be brief.", "Hi")
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("Hello.", 21, 3)
    request = provider.requests[0]
    assert request.path == OPENAI_PATH
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert request.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "max_completion_tokens": 4096,  # the model's max_output_tokens, by default
    }


def test_anthropic_messages(provider, client):
    provider.queue(Reply(body=anthropic_reply("Hello.", 30, 4)))
    completion = client("anthropic/test-claude").complete("Be brief.", {"q": "Hi", "n": 2})
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("Hello.", 30, 4)
    request = provider.requests[0]
    assert request.path == ANTHROPIC_PATH
    assert request.headers["x-api-key"] == ANTHROPIC_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 512,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": '{"q": "Hi", "n": 2}'}],
    }


def test_without_input_the_instructions_are_the_user_message(provider, client):
    client("anthropic/test-claude").complete("Say PASS.")
    client().complete("Say PASS.")
    anthropic, openai = provider.requests
    assert "system" not in anthropic.body
    assert anthropic.body["messages"] == [{"role": "user", "content": "Say PASS."}]
    assert openai.body["messages"] == [{"role": "user", "content": "Say PASS."}]


def test_anthropic_text_blocks_are_joined(provider, client):
    body = anthropic_reply("", 5, 5)
    body["content"] = [
        {"type": "text", "text": "PASS. "},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
        {"type": "text", "text": "Correct."},
    ]
    provider.queue(Reply(body=body))
    assert client("anthropic/test-claude").complete("x", "y").text == "PASS. Correct."


def test_base_urls_follow_the_sdks(catalogue):
    openai = catalogue.get("openai/test-gpt")
    anthropic = catalogue.get("anthropic/test-claude")
    local = catalogue.get("local/free")
    assert base_url(openai, {}) == "https://api.openai.com/v1"
    assert base_url(openai, {"OPENAI_BASE_URL": "http://proxy:8080/v1/"}) == "http://proxy:8080/v1"
    assert base_url(anthropic, {}) == "https://api.anthropic.com"
    assert base_url(anthropic, {"ANTHROPIC_BASE_URL": "http://a:1"}) == "http://a:1"
    assert base_url(local, {"OPENAI_BASE_URL": "http://ignored"}) == local.base_url


def test_a_429_is_retried_after_the_capped_retry_after(provider, client):
    provider.queue(Reply(429, openai_error("Slow down."), {"retry-after": "30"}))
    assert client().complete("x", "y").text.startswith("FAIL")
    first, second = provider.requests
    # Retry-After 30 s, capped at FAST_RETRY.max_retry_after_s = 0.3 s.
    assert 0.28 <= second.at - first.at < 1.5


def test_retry_after_ms_is_honoured(provider, client):
    provider.queue(Reply(429, openai_error("Slow down."), {"retry-after-ms": "200"}))
    client().complete("x", "y")
    first, second = provider.requests
    assert 0.19 <= second.at - first.at < 1.0


def test_server_errors_are_retried_until_success(provider, client):
    provider.queue(
        Reply(503, b"<html>Service Unavailable</html>"),
        Reply(500, openai_error("The server had an error.")),
    )
    assert client().complete("x", "Answer: Paris").text.startswith("PASS")
    assert len(provider.requests) == 3


def test_an_html_error_page_is_quoted(provider, client):
    provider.queue(*[Reply(502, b"<html>Bad Gateway</html>")] * 3)
    with pytest.raises(ProviderError) as caught:
        client().complete("x", "y")
    assert (caught.value.code, caught.value.message) == (
        "server_error",
        "HTTP 502: <html>Bad Gateway</html>",
    )
    assert caught.value.status == 502


def test_a_spent_quota_is_not_retried(provider, client):
    message = "You exceeded your current quota, please check your plan and billing details."
    provider.queue(Reply(429, openai_error(message, "insufficient_quota", "insufficient_quota")))
    with pytest.raises(ProviderError) as caught:
        client().complete("x", "y")
    assert (caught.value.code, caught.value.message) == (
        "rate_limited",
        f"HTTP 429 insufficient_quota: {message}",
    )
    assert len(provider.requests) == 1


def test_an_ollama_style_error_body(provider, client):
    provider.openai_key = ""
    provider.queue(Reply(404, {"error": "model 'llama3.1' not found, try pulling it first"}))
    with pytest.raises(ProviderError) as caught:
        client("local/free").complete("x", "y")
    assert caught.value.code == "not_found"
    assert caught.value.message == "HTTP 404: model 'llama3.1' not found, try pulling it first"
    assert "authorization" not in provider.requests[0].headers


def test_anthropic_auth_error(provider, client, catalogue):
    provider.anthropic_key = "another"
    with pytest.raises(ProviderError) as caught:
        client("anthropic/test-claude").complete("x", "y")
    assert (caught.value.code, caught.value.message) == (
        "unauthorized",
        "HTTP 401 authentication_error: invalid x-api-key",
    )


def test_a_refusal(provider, client):
    body = openai_reply("", 5, 5)
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't."}
    provider.queue(Reply(body=body))
    with pytest.raises(ProviderError) as caught:
        client().complete("x", "y")
    assert (caught.value.code, caught.value.message) == ("refused", "I can't.")


def test_missing_usage_counts_zero_tokens(provider, client):
    body = openai_reply("ok", 1, 1)
    del body["usage"]
    provider.queue(Reply(body=body))
    completion = client().complete("x", "y")
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("ok", 0, 0)


def test_a_slow_answer_times_out_without_a_retry(provider, client):
    provider.queue(Reply(delay_s=2.0))
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        client(timeout_s=0.5).complete("x", "y")
    assert caught.value.code == "timeout"
    assert 0.45 < time.monotonic() - started < 1.5
    assert len(provider.requests) == 1


def test_nobody_listening_is_unreachable_after_retries(catalogue):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**catalogue.env, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    model = catalogue.get("openai/test-gpt")
    slept = []
    with ProviderClient(
        model, api_key="k", env=env, timeout_s=1.0, retry=FAST_RETRY, sleep=slept.append
    ) as client:
        with pytest.raises(ProviderError) as caught:
            client.complete("x", "y")
    assert caught.value.code == "unreachable"
    assert f"127.0.0.1:{port}" in caught.value.message
    assert len(slept) == 2  # three attempts


def test_the_backoff_grows_with_jitter():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=3.0, max_retry_after_s=10.0)
    for _ in range(50):
        assert 0.5 <= policy.delay(1) <= 1.0
        assert 1.0 <= policy.delay(2) <= 2.0
        assert 1.5 <= policy.delay(3) <= 3.0  # capped at max_delay_s before the jitter
        assert policy.delay(1, retry_after=5.0) == 5.0
        assert policy.delay(1, retry_after=60.0) == 10.0


def test_the_key_is_redacted_from_error_messages(provider, client):
    provider.queue(Reply(400, anthropic_error(f"bad header x-api-key: {ANTHROPIC_KEY}")))
    with pytest.raises(ProviderError) as caught:
        client("anthropic/test-claude").complete("x", "y")
    assert caught.value.message == "HTTP 400 invalid_request_error: bad header x-api-key: ***"
