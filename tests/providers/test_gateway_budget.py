"""The budget enforced before each call, through make_llm_handler and a worst-case provider:
one that always writes as many output tokens as the request's cap allows, and counts the
prompt at the client's bound."""

from __future__ import annotations

import itertools
import threading

import pytest

from providers.budget import Budget, BudgetExceeded, Limits, Usage
from providers.clients import ProviderClient, prompt_token_bound
from providers.gateway import make_llm_handler
from providers.review import INSTRUCTIONS, review_feedback
from tests.providers.conftest import FAST_RETRY
from tests.providers.fakes import Reply, openai_error

CALL = {"instructions": "Grade.", "input": "Answer: Paris"}
BOUND = prompt_token_bound(CALL["instructions"], CALL["input"])


@pytest.fixture
def worst_case(provider):
    provider.worst_case = True
    return provider


@pytest.fixture
def llm(worst_case, catalogue):
    """llm(model_id, limits) -> (handle, budget): a handler on the worst-case provider."""
    clients = []

    def make(model_id: str, limits: Limits):
        model = catalogue.get(model_id)
        client = ProviderClient(
            model,
            api_key=catalogue.api_key(model),
            env=catalogue.env,
            timeout_s=5.0,
            retry=FAST_RETRY,
        )
        clients.append(client)
        budget = Budget(limits)
        handle = make_llm_handler(
            model, env=catalogue.env, budget=budget, meter=Usage(), client=client
        )
        return handle, budget

    yield make
    for client in clients:
        client.close()


def call_until_refused(handle, budget: Budget, limits: Limits, request: dict = CALL) -> dict:
    """Call until the budget refuses; the limits hold after every call. The refusal."""
    for _ in range(100):
        answer = handle(request)
        assert budget.tokens <= limits.max_tokens and budget.usd <= limits.max_usd
        if "error" in answer:
            return answer
        assert answer["text"].startswith("PASS")
    raise AssertionError("never refused")


def test_the_bound_counts_bytes_and_the_markers():
    assert BOUND == len(b"Grade.") + len(b"Answer: Paris") + 16 * 3
    assert prompt_token_bound("Grade.", None) == len(b"Grade.") + 16 * 2
    # Bytes, not characters: every token stands for at least one byte.
    assert prompt_token_bound("é", {"q": "日本"}) == 2 + len('{"q": "日本"}'.encode()) + 48


def test_the_cap_shrinks_as_the_tokens_are_used(worst_case, llm):
    limits = Limits(max_calls=100, max_tokens=10_000, max_usd=10.0)
    handle, budget = llm("openai/test-gpt", limits)
    refusal = call_until_refused(handle, budget, limits)

    caps = [r.body["max_completion_tokens"] for r in worst_case.requests]
    assert caps == [4096, 4096, 10_000 - 3 * BOUND - 2 * 4096]
    assert all("max_tokens" not in r.body for r in worst_case.requests)
    assert budget.tokens == 10_000  # the worst case fills the budget, and no more
    assert refusal == {
        "error": "budget_exceeded",
        "message": "max_tokens=10000, used 10000",
        "limit": "tokens",
        "max": 10_000,
        "used": 10_000,
    }
    assert len(worst_case.requests) == 3  # the refused call was never sent


def test_the_cap_shrinks_as_the_dollars_are_used(worst_case, llm):
    # $2 in and $8 out per million: a full call costs 67 * $2e-6 + 4096 * $8e-6.
    limits = Limits(max_calls=100, max_tokens=10**6, max_usd=0.05)
    handle, budget = llm("openai/test-gpt", limits)
    refusal = call_until_refused(handle, budget, limits)

    first = BOUND * 2e-6 + 4096 * 8e-6
    second = int((0.05 - first - BOUND * 2e-6) / 8e-6)
    assert [r.body["max_completion_tokens"] for r in worst_case.requests] == [4096, second]
    assert second == 2120
    assert (refusal["error"], refusal["limit"]) == ("budget_exceeded", "usd")
    assert 0.05 - 8e-6 < budget.usd <= 0.05


def test_anthropic_gets_the_cap_as_max_tokens(worst_case, llm):
    limits = Limits(max_calls=100, max_tokens=1500, max_usd=10.0)
    handle, budget = llm("anthropic/test-claude", limits)  # max_output_tokens 512
    call_until_refused(handle, budget, limits)

    caps = [r.body["max_tokens"] for r in worst_case.requests]
    assert caps == [512, 512, 1500 - 3 * BOUND - 2 * 512]
    assert budget.tokens == 1500


def test_a_free_model_is_not_refused_for_dollars(worst_case, llm):
    worst_case.openai_key = ""
    limits = Limits(max_calls=100, max_tokens=10_000, max_usd=0.0)
    handle, budget = llm("local/free", limits)
    refusal = call_until_refused(handle, budget, limits)

    # An OpenAI-compatible server is sent max_tokens.
    caps = [r.body["max_tokens"] for r in worst_case.requests]
    assert caps == [4096, 4096, 10_000 - 3 * BOUND - 2 * 4096]
    assert refusal["limit"] == "tokens" and budget.usd == 0


def test_a_paid_model_without_dollars_sends_nothing(worst_case, llm):
    handle, budget = llm("openai/test-gpt", Limits(max_calls=5, max_tokens=1000, max_usd=0.0))
    assert handle(CALL)["limit"] == "usd"
    assert worst_case.requests == [] and budget.calls == 0


def test_a_prompt_that_cannot_fit_is_refused_before_any_request(worst_case, llm):
    handle, budget = llm("openai/test-gpt", Limits(max_calls=5, max_tokens=100, max_usd=1.0))
    long = {"instructions": "x" * 60, "input": "y"}  # 61 bytes + 48: 109 tokens at most
    assert handle(long) == {
        "error": "budget_exceeded",
        "message": "max_tokens=100, used 0",
        "limit": "tokens",
        "max": 100,
        "used": 0,
    }
    # Dollars: at $2 per million input tokens, $0.0001 pays for 50 of them.
    dear, dear_budget = llm("openai/test-gpt", Limits(5, 10**6, 0.0001))
    assert dear({"instructions": "x", "input": "y"})["limit"] == "usd"
    assert worst_case.requests == []
    assert (budget.calls, budget.refused, dear_budget.calls) == (0, 1, 0)
    assert handle({"instructions": "x", "input": "y"})["text"]  # a short one fits
    assert worst_case.requests[0].body["max_completion_tokens"] == 100 - (2 + 48)


def test_a_failed_call_gives_its_reservation_back(worst_case, llm):
    limits = Limits(max_calls=100, max_tokens=5000, max_usd=10.0)
    handle, budget = llm("openai/test-gpt", limits)
    worst_case.queue(Reply(400, openai_error("Invalid parameter.")))
    assert handle(CALL)["error"] == "bad_request"
    assert budget.tokens == 0
    assert handle(CALL)["text"]
    first, second = worst_case.requests
    assert first.body["max_completion_tokens"] == second.body["max_completion_tokens"] == 4096


def test_calls_from_several_threads_never_overshoot_together(worst_case, llm, catalogue):
    limits = Limits(max_calls=1000, max_tokens=30_000, max_usd=0.15)
    budget = Budget(limits)
    model = catalogue.get("openai/test-gpt")
    # Each request is answered after 50 ms, so the calls of the 6 threads overlap.
    worst_case.queue(*[Reply(delay_s=0.05) for _ in range(200)])
    refusals, clients = [], []
    start = threading.Barrier(6)

    def work(index: int) -> None:
        client = ProviderClient(
            model, api_key=catalogue.api_key(model), env=catalogue.env, timeout_s=5.0
        )
        clients.append(client)
        handle = make_llm_handler(
            model, env=catalogue.env, budget=budget, meter=Usage(), client=client
        )
        request = {"instructions": "Grade.", "input": f"Answer: Paris ({index})"}
        start.wait()
        for _ in range(100):
            answer = handle(request)
            if "error" in answer:
                refusals.append(answer)
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()

    assert [r["error"] for r in refusals] == ["budget_exceeded"] * 6
    assert budget.tokens <= limits.max_tokens and budget.usd <= limits.max_usd
    reported = sum(r.most_input_tokens + r.output_cap for r in worst_case.requests)
    assert reported == budget.tokens  # every call used all it could
    arrivals = sorted(r.at for r in worst_case.requests)
    assert any(b - a < 0.05 for a, b in itertools.pairwise(arrivals))  # they overlapped


def test_the_review_is_capped_by_its_budget(worst_case, catalogue):
    model = catalogue.get("openai/test-gpt")
    budget = Budget(Limits(max_calls=10, max_tokens=3000, max_usd=1.0))
    case = {"input": "q", "output": "a", "expected": None, "score": 0.0, "feedback": "Wrong."}
    kwargs = dict(case, language="en", env=catalogue.env, timeout_s=2.0, budget=budget)
    review_feedback(model, **kwargs)

    bound = prompt_token_bound(INSTRUCTIONS.format(language="English"), case)
    assert worst_case.requests[0].body["max_completion_tokens"] == 3000 - bound
    assert budget.tokens == 3000
    with pytest.raises(BudgetExceeded):
        review_feedback(model, **kwargs)
    assert len(worst_case.requests) == 1
