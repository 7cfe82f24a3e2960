"""skynet.llm() answered by a real provider client through the real sandbox and run_check:
the docs' judge example, usage per case, the budget, every provider error, key secrecy."""

from __future__ import annotations

import json

import pytest

from contract.cases import DEFAULT_CASES
from providers.budget import Limits
from providers.gateway import refusing_handler
from tests.providers.conftest import (
    ANTHROPIC_KEY,
    JUDGE_METRIC,
    ONE_CALL_METRIC,
    OPENAI_KEY,
    PASS_AND_FAIL,
)
from tests.providers.fakes import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Reply,
    anthropic_error,
    openai_error,
)

MODELS = {
    "openai": ("openai/test-gpt", OPENAI_PATH),
    "anthropic": ("anthropic/test-claude", ANTHROPIC_PATH),
}


@pytest.mark.parametrize("vendor", sorted(MODELS))
def test_the_docs_judge_example_passes_and_fails(vendor, provider, gateway, check):
    model_id, path = MODELS[vendor]
    result = check(JUDGE_METRIC, gateway(model_id), cases=PASS_AND_FAIL)

    assert result.passed, result.to_dict()
    good, bad = result.cases
    assert (good.status, good.score) == ("valid", 1.0)
    assert good.feedback.startswith("PASS ")
    assert (bad.status, bad.score) == ("valid", 0.0)
    assert bad.feedback.startswith("FAIL ") and "Paris" in bad.feedback

    assert [r.path for r in provider.requests] == [path, path]
    # The cases run at once: find the passing case's request by what it asked.
    first = next(r for r in provider.requests if r.user.endswith("Answer: Paris"))
    assert first.system == "Answer PASS or FAIL, then give one sentence of reasons."
    assert first.user == "Question: What is the capital of France?\nAnswer: Paris"
    if vendor == "openai":
        assert first.headers["authorization"] == f"Bearer {OPENAI_KEY}"
        assert first.body["model"] == "gpt-test"
        assert [m["role"] for m in first.body["messages"]] == ["system", "user"]
    else:
        assert first.headers["x-api-key"] == ANTHROPIC_KEY
        assert first.headers["anthropic-version"] == "2023-06-01"
        assert first.body["model"] == "claude-test"
        assert first.body["max_tokens"] == 512
        assert [m["role"] for m in first.body["messages"]] == ["user"]


def test_usage_and_cost_are_attributed_per_case(provider, gateway, check):
    # 1000 input and 500 output tokens per call at $2 / $8 per million: $0.006 a call.
    provider.queue(*[Reply(input_tokens=1000, output_tokens=500) for _ in range(3)])
    metric = """
        from skynet import llm
        CALLS = {"billing": 1, "other": 2, "account": 0}
        def score(input, output, expected=None):
            for _ in range(CALLS[output]):
                llm("Label ok?", input={"label": output})
            return 1.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
    """
    gw = gateway("openai/test-gpt")
    result = check(metric, gw, cases=list(DEFAULT_CASES))

    assert result.passed
    first, second, third = (c.usage for c in result.cases)
    assert first["model_calls"] == 1 and second["model_calls"] == 2 and third is None
    assert (first["input_tokens"], first["output_tokens"]) == (1000, 500)
    assert (second["input_tokens"], second["output_tokens"]) == (2000, 1000)
    assert first["cost_usd"] == pytest.approx(0.006, abs=1e-12)
    assert second["cost_usd"] == pytest.approx(0.012, abs=1e-12)
    assert 0 < first["model_ms"] < 1000
    assert gw.total()["cost_usd"] == pytest.approx(0.018, abs=1e-12)
    assert sorted(r.user for r in provider.requests) == [
        '{"label": "billing"}',
        '{"label": "other"}',
        '{"label": "other"}',
    ]
    assert result.to_dict()["cases"][0]["usage"] == first


def test_the_budget_cuts_off_a_flood_of_calls(provider, gateway, check):
    metric = """
        from skynet import llm
        def score(input, output, expected=None):
            for i in range(1000):
                llm("Say hi.", input=str(i))
            return 1.0, {"feedback": "unreachable"}
    """
    limits = Limits(max_calls=5, max_tokens=1_000_000, max_usd=10.0)
    result = check(metric, gateway("openai/test-gpt", limits))

    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "model_error")
    assert case.params == {"code": "budget_exceeded", "message": "max_calls=5, used 5"}
    assert len(provider.requests) == 5
    assert case.usage["model_calls"] == 5


def test_the_budget_is_shared_by_the_cases_of_a_check(provider, gateway, check):
    metric = """
        import skynet
        def score(input, output, expected=None):
            made = 0
            try:
                for _ in range(3):
                    skynet.llm("Say hi.", input=output)
                    made += 1
            except skynet.ModelError as exc:
                return 0.5, {"feedback": f"{made} calls, then {exc.code}: {exc.message}"}
            return 1.0, {"feedback": f"{made} calls"}
    """
    # Each call claims its prompt's bound (60-62 tokens: "Say hi." and the output, plus
    # 48 for the markers) and at least one output token before it is made, and is then
    # charged the 12 + 7 tokens the fake reports: after four calls (76 tokens) the 54
    # tokens left cannot hold the next call. The cases run at once, so which case got
    # which of the four calls varies; the budget is the check's, whatever the order.
    limits = Limits(max_calls=100, max_tokens=130, max_usd=10.0)
    result = check(metric, gateway("openai/test-gpt", limits), cases=list(DEFAULT_CASES))

    made = [int(c.feedback.split()[0]) for c in result.cases]
    # At most four fit; fewer when reservations of calls in flight at once met the limit.
    assert 1 <= sum(made) <= 4 and len(provider.requests) == sum(made)
    refused = [c.feedback for c in result.cases if "budget_exceeded" in c.feedback]
    assert len(refused) >= 2, refused
    for text in refused:
        used = float(text.rsplit("used ", 1)[1])
        assert "max_tokens=130" in text and used <= 130, text
    assert [(c.usage or {}).get("model_calls", 0) for c in result.cases] == made


def _openai_500():
    return Reply(
        500, openai_error("The server had an error while processing your request.", "server_error")
    )


ERRORS = {
    "unauthorized": (
        [Reply(401, openai_error("Incorrect API key provided: sk-wr***ng.", code="invalid_api_key"))],
        1,
        "unauthorized",
        "HTTP 401 invalid_api_key: Incorrect API key provided: sk-wr***ng.",
    ),
    "not_found": (
        [Reply(404, openai_error("The model `gpt-test` does not exist or you do not have access to it.", code="model_not_found"))],
        1,
        "not_found",
        "HTTP 404 model_not_found: The model `gpt-test` does not exist or you do not have access to it.",
    ),
    "server_error_after_retries": (
        [_openai_500(), _openai_500(), _openai_500()],
        3,
        "server_error",
        "HTTP 500 server_error: The server had an error while processing your request.",
    ),
    "rate_limited_after_retries": (
        [Reply(429, openai_error("Rate limit reached for gpt-test.", "requests", "rate_limit_exceeded"))] * 3,
        3,
        "rate_limited",
        "HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-test.",
    ),
    "malformed_json": (
        [Reply(200, b'{"choices": [{"message": ')],
        1,
        "bad_response",
        'the reply is not JSON: {"choices": [{"message":',
    ),
    "wrong_shape": (
        [Reply(200, {"object": "chat.completion", "choices": []})],
        1,
        "bad_response",
        "the reply has no choices[0].message",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_each_provider_error_reaches_the_case(name, provider, gateway, check):
    replies, requests, code, message = ERRORS[name]
    provider.queue(*replies)
    case = check(ONE_CALL_METRIC, gateway("openai/test-gpt")).cases[0]

    assert (case.status, case.problem) == ("error", "model_error")
    assert case.params == {"code": code, "message": message}
    assert len(provider.requests) == requests
    assert case.usage["model_calls"] == 1 and case.usage["cost_usd"] == 0


def test_a_timeout_reaches_the_case(provider, gateway, check):
    provider.queue(Reply(delay_s=2.5))
    case = check(ONE_CALL_METRIC, gateway("openai/test-gpt", timeout_s=1.0)).cases[0]

    assert (case.problem, case.params["code"]) == ("model_error", "timeout")
    assert case.params["message"] == (
        f"no answer from {provider.url}/v1/chat/completions within 1 s"
    )
    assert len(provider.requests) == 1  # a timeout is not retried
    assert 900 < case.usage["model_ms"] < 2400


def test_a_rate_limit_then_success_is_retried(provider, gateway, check):
    provider.queue(
        Reply(429, anthropic_error("Number of requests has exceeded your rate limit.", "rate_limit_error"), {"retry-after": "0"}),
        Reply(529, anthropic_error("Overloaded", "overloaded_error")),
    )  # fmt: skip
    result = check(JUDGE_METRIC, gateway("anthropic/test-claude"))

    assert result.passed and result.cases[0].feedback.startswith("PASS ")
    assert len(provider.requests) == 3
    assert result.cases[0].usage["model_calls"] == 1


def test_an_anthropic_error_carries_its_message(provider, gateway, check):
    provider.queue(
        Reply(400, anthropic_error("prompt is too long: 250000 tokens > 200000 maximum"))
    )
    case = check(ONE_CALL_METRIC, gateway("anthropic/test-claude")).cases[0]
    assert case.params == {
        "code": "bad_request",
        "message": "HTTP 400 invalid_request_error: prompt is too long: 250000 tokens > 200000 maximum",
    }


def test_the_wrong_key_is_unauthorized_and_never_echoed(provider, catalogue, gateway, check):
    # The fake, like OpenAI, quotes the key it was given in its 401 message.
    provider.openai_key = "sk-the-right-one"
    case = check(ONE_CALL_METRIC, gateway("openai/test-gpt")).cases[0]

    assert case.params["code"] == "unauthorized"
    assert case.params["message"].startswith(
        "HTTP 401 invalid_api_key: Incorrect API key provided: ***. "
    )
    assert OPENAI_KEY not in case.params["message"]


def test_no_key_is_readable_from_a_metric(provider, gateway, check, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    metric = """
        import json, os
        from skynet import llm

        def read(path):
            try:
                with open(path, "rb") as fh:
                    return fh.read().decode("utf-8", "replace")
            except OSError as exc:
                return f"<{type(exc).__name__}>"

        def score(input, output, expected=None):
            verdict = llm("Answer PASS or FAIL.", input=f"Answer: {output}")
            seen = {
                "environ": dict(os.environ),
                "self": read("/proc/self/environ"),
                "init": read("/proc/1/environ"),
                "parent": read(f"/proc/{os.getppid()}/environ"),
                "verdict": verdict,
            }
            return 1.0, {"feedback": json.dumps(seen)}
    """
    case = check(metric, gateway("openai/test-gpt")).cases[0]

    assert case.status == "valid" and case.feedback_length == len(case.feedback)
    seen = json.loads(case.feedback)
    assert seen["verdict"].startswith("PASS ")  # the key was used, in the parent
    assert "PATH" in seen["environ"]  # the metric could read its own environment
    # A case is not dumpable (no other case may read it), so its /proc files are root's:
    # it cannot read its own environ there either, nor anyone else's.
    assert seen["self"] == "<PermissionError>" or "PATH=" in seen["self"]
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "sk-test", "sk-ant"):
        assert secret not in case.feedback
        assert secret not in case.stdout + case.stderr
    assert "API_KEY" not in case.feedback


def test_a_free_local_model_needs_no_key(provider, gateway, check):
    provider.openai_key = ""  # a keyless local server, like Ollama
    result = check(JUDGE_METRIC, gateway("local/free", Limits(5, 1000, 0.0)))
    assert result.passed and result.cases[0].feedback.startswith("PASS ")
    assert "authorization" not in provider.requests[0].headers
    assert result.cases[0].usage["cost_usd"] == 0


def test_a_paid_model_with_no_dollars_is_refused(provider, gateway, check):
    case = check(ONE_CALL_METRIC, gateway("openai/test-gpt", Limits(5, 1000, 0.0))).cases[0]
    assert case.params == {"code": "budget_exceeded", "message": "max_usd=0, used 0.000000"}
    assert provider.requests == [] and case.usage is None


def test_an_unusable_stored_choice_answers_not_configured(catalogue, check):
    from contract.engine import run_check

    result = run_check(
        "from skynet import llm\ndef score(input, output):\n    return 1.0, {'feedback': llm('x')}\n",
        PASS_AND_FAIL[:1],
        timeout_s=10,
        on_llm=refusing_handler("not_configured", "OPENAI_API_KEY"),
    )
    assert result.cases[0].params == {"code": "not_configured", "message": "OPENAI_API_KEY"}
    assert result.cases[0].usage is None


def test_without_a_model_llm_still_says_no_metric_model(check):
    case = check(ONE_CALL_METRIC, None).cases[0]
    assert case.params == {"code": "no_metric_model", "message": ""}
