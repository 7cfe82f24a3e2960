"""The gateway's handler called directly, and how run_check picks a per-case handler."""

from __future__ import annotations

from providers.budget import Budget, Limits, Usage
from providers.gateway import gateway_for_check, make_llm_handler
from tests.providers.conftest import FAST_RETRY, ONE_CALL_METRIC, PLENTY
from tests.providers.fakes import Reply, openai_reply


def test_a_handler_answers_counts_and_charges(provider, catalogue):
    model = catalogue.get("openai/test-gpt")
    budget, meter = Budget(PLENTY), Usage()
    handle = make_llm_handler(
        model, env=catalogue.env, budget=budget, meter=meter, timeout_s=1.0, retry=FAST_RETRY
    )
    provider.queue(Reply(body=openai_reply("Fine.", 500_000, 250_000)))
    assert handle({"instructions": "Grade.", "input": {"a": 1}}) == {"text": "Fine."}
    assert handle({"instructions": 7, "input": None}) == {
        "error": "bad_request",
        "message": "instructions must be a string",
    }
    # $2 and $8 per million: 0.5 M in and 0.25 M out cost $1 + $2.
    assert meter.as_dict()["cost_usd"] == 3.0
    assert (budget.calls, budget.tokens, budget.usd) == (1, 750_000, 3.0)
    assert len(provider.requests) == 1


def test_llm_for_case_wins_over_on_llm(provider, gateway, check):
    from contract.engine import run_check

    asked = []
    result = run_check(
        ONE_CALL_METRIC,
        None,
        timeout_s=10,
        on_llm=lambda request: {"text": "from on_llm"},
        llm_for_case=lambda index: asked.append(index) or (lambda r: {"text": f"case {index}"}),
    )
    assert asked == [0, 1, 2]
    assert [c.feedback for c in result.cases] == ["case 0", "case 1", "case 2"]
    assert [c.usage for c in result.cases] == [None, None, None]  # these handlers count nothing


def test_no_model_chosen_means_no_gateway(catalogue):
    limits = Limits(1, 1, 1.0)
    assert (
        gateway_for_check(
            catalogue, metric_model=None, reflection_model=None, limits=limits, timeout_s=1
        )
        is None
    )
    with gateway_for_check(
        catalogue, metric_model=None, reflection_model="local/free", limits=limits, timeout_s=1
    ) as gw:
        assert gw.model.id == "local/free"
