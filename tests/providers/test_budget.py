"""Cost arithmetic, usage records and the per-check budget, on known numbers."""

from __future__ import annotations

import pytest

from providers.budget import Budget, BudgetExceeded, Limits, Usage


def test_cost_is_tokens_over_a_million_times_the_price(catalogue):
    gpt = catalogue.get("openai/test-gpt")  # $2 in, $8 out per million
    claude = catalogue.get("anthropic/test-claude")  # $3 in, $15 out per million
    assert gpt.cost_usd(1_000_000, 0) == pytest.approx(2.0)
    assert gpt.cost_usd(0, 1_000_000) == pytest.approx(8.0)
    assert gpt.cost_usd(1234, 567) == pytest.approx(0.002468 + 0.004536)
    assert claude.cost_usd(250_000, 10_000) == pytest.approx(0.75 + 0.15)
    assert catalogue.get("local/free").cost_usd(10**9, 10**9) == 0


def test_usage_adds_up_and_rounds():
    usage = Usage()
    assert usage.as_dict() is None
    usage.record(input_tokens=100, output_tokens=20, cost_usd=0.1, ms=12.34)
    usage.record(input_tokens=1, output_tokens=2, cost_usd=0.2, ms=0.01)
    assert usage.as_dict() == {
        "model_calls": 2,
        "input_tokens": 101,
        "output_tokens": 22,
        "cost_usd": 0.3,
        "model_ms": 12.3,
    }


def test_the_calls_limit():
    budget = Budget(Limits(max_calls=2, max_tokens=100, max_usd=1.0))
    budget.reserve()
    budget.reserve()
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve()
    assert caught.value.params == {"limit": "calls", "max": 2, "used": 2}
    assert caught.value.message == "max_calls=2, used 2"
    assert (budget.calls, budget.refused) == (2, 1)


def test_the_tokens_and_dollars_limits_apply_after_the_call_that_reaches_them():
    budget = Budget(Limits(max_calls=10, max_tokens=100, max_usd=1.0))
    budget.reserve()
    budget.charge(99, 0.5)
    budget.reserve()  # 99 < 100: one more call may go
    budget.charge(50, 0.1)
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve()
    assert caught.value.params == {"limit": "tokens", "max": 100, "used": 149}

    dollars = Budget(Limits(max_calls=10, max_tokens=10**6, max_usd=0.01))
    dollars.reserve()
    dollars.charge(10, 0.0125)
    with pytest.raises(BudgetExceeded) as caught:
        dollars.reserve()
    assert caught.value.limit == "usd"
    assert caught.value.message == "max_usd=0.01, used 0.012500"


def test_no_dollars_allows_only_free_models():
    budget = Budget(Limits(max_calls=10, max_tokens=1000, max_usd=0.0))
    budget.reserve(free=True)
    with pytest.raises(BudgetExceeded):
        budget.reserve(free=False)
    assert Budget(Limits(0, 1000, 1.0)).limits.max_calls == 0
    with pytest.raises(BudgetExceeded):
        Budget(Limits(0, 1000, 1.0)).reserve(free=True)
