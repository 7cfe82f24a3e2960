"""Cost arithmetic, usage records and the per-check budget, on known numbers."""

from __future__ import annotations

import json
import random
import threading
from dataclasses import replace
from fractions import Fraction

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


def test_the_calls_limit(catalogue):
    gpt = catalogue.get("openai/test-gpt")
    budget = Budget(Limits(max_calls=2, max_tokens=10**6, max_usd=1.0))
    budget.settle(budget.reserve(gpt, 10), tokens=20, usd=0.0)
    budget.release(budget.reserve(gpt, 10))  # a failed call counts as a call
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 10)
    assert caught.value.params == {"limit": "calls", "max": 2, "used": 2}
    assert caught.value.message == "max_calls=2, used 2"
    assert (budget.calls, budget.refused, budget.tokens) == (2, 1, 20)


def test_the_output_allowance_is_what_the_tokens_left_allow(catalogue):
    claude = catalogue.get("anthropic/test-claude")  # max_output_tokens 512
    budget = Budget(Limits(max_calls=10, max_tokens=1000, max_usd=10.0))
    first = budget.reserve(claude, 100)
    assert (first.input_tokens, first.output_tokens) == (100, 512)  # the model's cap
    second = budget.reserve(claude, 100)  # the first is still in flight: 388 left
    assert second.output_tokens == 288
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(claude, 1)  # nothing left while both are in flight
    assert caught.value.params == {"limit": "tokens", "max": 1000, "used": 1000}

    budget.settle(first, tokens=150, usd=0.0)  # used less than it reserved
    third = budget.reserve(claude, 100)
    assert third.output_tokens == 1000 - 150 - 388 - 100
    budget.release(second)
    budget.release(second)  # idempotent
    budget.settle(third, tokens=third.tokens, usd=0.0)
    assert budget.tokens == 150 + 100 + 362 <= 1000


def test_a_prompt_that_cannot_fit_is_refused_for_tokens(catalogue):
    gpt = catalogue.get("openai/test-gpt")
    budget = Budget(Limits(max_calls=10, max_tokens=100, max_usd=10.0))
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 100)  # no room for one output token
    assert caught.value.params == {"limit": "tokens", "max": 100, "used": 0}
    assert budget.reserve(gpt, 99).output_tokens == 1
    assert (budget.calls, budget.refused) == (1, 1)


def test_the_output_allowance_is_what_the_dollars_left_pay_for(catalogue):
    gpt = catalogue.get("openai/test-gpt")  # $2 in, $8 out per million
    budget = Budget(Limits(max_calls=10, max_tokens=10**6, max_usd=0.01))
    # 1000 input tokens cost $0.002; the $0.008 left pay for 1000 output tokens.
    reservation = budget.reserve(gpt, 1000)
    assert reservation.output_tokens == 1000
    assert float(reservation.usd) == pytest.approx(0.01)
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 1)
    assert caught.value.limit == "usd"
    assert caught.value.message == "max_usd=0.01, used 0.010000"

    budget.settle(reservation, tokens=1500, usd=gpt.cost_usd(1000, 500))  # $0.006
    assert budget.usd == pytest.approx(0.006)
    assert budget.reserve(gpt, 1000).output_tokens == 250  # $0.002 left after the prompt
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 10)
    assert caught.value.limit == "usd"


def test_a_budget_taken_up_again_goes_on_exactly_where_it_stopped(catalogue):
    """An evaluation's turns: what one turn spent is data, the next turn's budget starts
    from it, and every reservation is what one budget would have made."""
    gpt = catalogue.get("openai/test-gpt")  # $2 in, $8 out per million
    limits = Limits(max_calls=4, max_tokens=10**6, max_usd=0.01)
    whole, first = Budget(limits), Budget(limits)
    for budget in (whole, first):
        budget.settle(budget.reserve(gpt, 1000), tokens=1300, usd=gpt.cost_usd(1000, 300))
        budget.release(budget.reserve(gpt, 10))  # a failed call counts as a call
    spent = json.loads(json.dumps(first.spent()))  # as the row stores it
    later = Budget.resumed(limits, spent)
    assert (later.calls, later.tokens, later.usd) == (whole.calls, whole.tokens, whole.usd)
    # $0.0044 spent: the same allowance for the same prompt, to the token.
    assert later.reserve(gpt, 1000).output_tokens == whole.reserve(gpt, 1000).output_tokens
    for budget in (whole, later):
        with pytest.raises(BudgetExceeded) as caught:
            budget.reserve(gpt, 2000)  # $0.004 for the prompt: more than is left
        assert caught.value.message == "max_usd=0.01, used 0.010000"
    assert Budget.resumed(limits, None).spent() == Budget(limits).spent()


def test_the_prompt_alone_can_be_too_dear(catalogue):
    gpt = catalogue.get("openai/test-gpt")
    budget = Budget(Limits(max_calls=10, max_tokens=10**6, max_usd=0.001))
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 500)  # $0.001 for the prompt, nothing for an answer
    assert caught.value.limit == "usd"
    assert budget.reserve(gpt, 496).output_tokens == 1


def test_no_dollars_allows_only_free_models(catalogue):
    free, gpt = catalogue.get("local/free"), catalogue.get("openai/test-gpt")
    budget = Budget(Limits(max_calls=10, max_tokens=5000, max_usd=0.0))
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(gpt, 1)
    assert caught.value.message == "max_usd=0, used 0.000000"
    assert budget.reserve(free, 100).output_tokens == 4096
    assert budget.reserve(free, 100).output_tokens == 5000 - 4196 - 100  # tokens count
    with pytest.raises(BudgetExceeded):
        Budget(Limits(0, 1000, 1.0)).reserve(free, 1)


def test_free_output_is_bounded_by_tokens_only(catalogue):
    cheap = replace(catalogue.get("openai/test-gpt"), output_usd_per_mtok=0.0)
    budget = Budget(Limits(max_calls=10, max_tokens=10**6, max_usd=0.001))
    assert budget.reserve(cheap, 500).output_tokens == 4096  # the $0.001 pays the prompt
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(cheap, 1)
    assert caught.value.limit == "usd"


def test_rounding_cannot_take_the_dollars_past_the_limit(catalogue):
    # $0.1 in and $0.4 out per million: 5 + 5 tokens cost $2.5e-6 exactly, but the float
    # cost_usd(5, 5) that would be charged rounds above it.
    model = replace(
        catalogue.get("openai/test-gpt"), input_usd_per_mtok=0.1, output_usd_per_mtok=0.4
    )
    assert model.cost_usd(5, 5) > 2.5e-06
    budget = Budget(Limits(max_calls=10, max_tokens=10**6, max_usd=2.5e-06))
    reservation = budget.reserve(model, 5)
    assert reservation.output_tokens == 4
    budget.settle(reservation, tokens=9, usd=model.cost_usd(5, 4))
    assert budget.usd <= 2.5e-06


@pytest.mark.parametrize("seed", range(5))
def test_worst_case_calls_never_pass_the_limits(seed, catalogue):
    """Awkward prices and limits, every call using all it reserved: the totals reach the
    limits (dollars added exactly, so no rounding goes past) and never pass them."""
    rng = random.Random(seed)
    base = catalogue.get("openai/test-gpt")
    for _ in range(20):
        model = replace(
            base,
            input_usd_per_mtok=rng.choice([0.1, 0.15, 0.4, 1.1, 2.5, 3.0, 0.0]),
            output_usd_per_mtok=rng.choice([0.4, 0.6, 1.6, 4.4, 15.0, 0.3]),
            max_output_tokens=rng.choice([16, 512, 4096]),
        )
        limits = Limits(100_000, rng.randrange(50, 20_000), rng.choice([0.0001, 0.0123, 0.07]))
        budget, charged = Budget(limits), Fraction(0)
        while True:
            try:
                reservation = budget.reserve(model, rng.randrange(1, 300))
            except BudgetExceeded:
                break
            tokens = reservation.tokens
            cost = model.cost_usd(reservation.input_tokens, reservation.output_tokens)
            budget.settle(reservation, tokens=tokens, usd=cost)
            charged += Fraction(cost)
            assert budget.tokens <= limits.max_tokens
            assert budget.usd <= limits.max_usd and charged <= Fraction(limits.max_usd)


def test_calls_in_flight_hold_their_reservations(catalogue):
    """Threads that reserve, hold and settle all they reserved never pass the limits."""
    claude = catalogue.get("anthropic/test-claude")  # $3 in, $15 out per million
    limits = Limits(max_calls=10_000, max_tokens=30_000, max_usd=1.0)
    budget = Budget(limits)
    in_flight, peak, lock = [0], [0], threading.Lock()
    start = threading.Barrier(8)

    def work() -> None:
        start.wait()
        while True:
            try:
                reservation = budget.reserve(claude, 200)
            except BudgetExceeded:
                return
            with lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
            threading.Event().wait(0.002)
            with lock:
                in_flight[0] -= 1
            cost = claude.cost_usd(reservation.input_tokens, reservation.output_tokens)
            budget.settle(reservation, tokens=reservation.tokens, usd=cost)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] > 1  # the calls did overlap
    assert budget.tokens <= limits.max_tokens and budget.usd <= limits.max_usd
    assert budget.tokens > limits.max_tokens - 712  # and the tokens were used up
