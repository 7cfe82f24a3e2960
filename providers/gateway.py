"""The parent's answer to skynet.llm(): call the metric model, count, charge, refuse.

The metric's child only sends {"instructions", "input"}, or a conversation ("messages":
DSPy's LM in a metric, sent to the provider as messages); the key, the provider and the
budget live here, in the parent. One ModelGateway serves one check: `for_case(i)` gives
the engine a per-case handler (contract.engine's `llm_for_case`) whose `usage()` tells
what that case's calls used, while the Budget caps the whole check.

Every answer is {"text": str} or {"error": code, "message": str}: a ProviderError's code,
"budget_exceeded", or "bad_request" for a request the child should not have sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from providers.budget import Budget, BudgetExceeded, Limits, Reservation, Usage
from providers.catalogue import Catalogue, Model, resolve_metric_model
from providers.clients import (
    ProviderClient,
    ProviderError,
    RetryPolicy,
    is_conversation,
    prompt_token_bound,
)

LlmHandler = Callable[[dict], dict]
logger = logging.getLogger(__name__)


def make_llm_handler(
    model: Model,
    *,
    env: Mapping[str, str],
    budget: Budget,
    meter: Usage,
    timeout_s: float = 60.0,
    retry: RetryPolicy | None = None,
    client: ProviderClient | None = None,
) -> LlmHandler:
    """A handler for contract.runner: every call is budgeted, timed and recorded in `meter`.

    The budget is claimed before the call (the prompt's token bound and an output cap
    that fits what is left) and the cap is sent with the request, so no call can take
    the check past its limits. The key is read from `env` (the parent's environment)
    here and goes no further than the HTTP request. Pass `client` to share one
    connection pool between handlers.
    """
    if client is None:
        client = ProviderClient(
            model, api_key=_api_key(model, env), env=env, timeout_s=timeout_s, retry=retry
        )

    def handle(request: dict) -> dict:
        instructions = request.get("instructions")
        if not isinstance(instructions, str):
            return {"error": "bad_request", "message": "instructions must be a string"}
        input = request.get("input")
        messages = request.get("messages")
        if messages is not None and not is_conversation(messages):
            return {"error": "bad_request", "message": "messages must be a conversation"}
        try:
            bound = prompt_token_bound(instructions, input, messages)
            reservation = budget.reserve(model, bound)
        except BudgetExceeded as exc:
            return {"error": "budget_exceeded", "message": exc.message, **exc.params}
        try:
            return call(instructions, input, messages, reservation)
        finally:
            budget.release(reservation)  # a failed call's; a no-op once settled

    def call(
        instructions: str, input: object, messages: list[dict] | None, reservation: Reservation
    ) -> dict:
        started = time.monotonic()
        try:
            completion = client.complete(
                instructions,
                input,
                messages=messages,
                max_output_tokens=reservation.output_tokens,
            )
        except ProviderError as exc:
            meter.record(ms=(time.monotonic() - started) * 1000)
            return {"error": exc.code, "message": exc.message}
        except Exception as exc:  # a bug here must not end the check; the metric is told
            logger.exception("the %s call failed unexpectedly", model.id)
            meter.record(ms=(time.monotonic() - started) * 1000)
            return {"error": "handler_error", "message": type(exc).__name__}
        ms = (time.monotonic() - started) * 1000
        cost = model.cost_usd(completion.input_tokens, completion.output_tokens)
        # Charged and released at once, so no other call can claim the space between.
        budget.settle(
            reservation, tokens=completion.input_tokens + completion.output_tokens, usd=cost
        )
        meter.record(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost_usd=cost,
            ms=ms,
        )
        return {"text": completion.text}

    return handle


class CaseHandler:
    """One case's handler: callable like an LlmHandler, with the usage of its calls."""

    def __init__(self, handler: LlmHandler, meter: Usage) -> None:
        self._handler = handler
        self.meter = meter

    def __call__(self, request: dict) -> dict:
        return self._handler(request)

    def usage(self) -> dict | None:
        return self.meter.as_dict()


class ModelGateway:
    """The metric model of one check: one client, one Budget, a Usage per case."""

    def __init__(
        self,
        model: Model,
        *,
        env: Mapping[str, str],
        limits: Limits,
        timeout_s: float,
        retry: RetryPolicy | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.model = model
        self.env = env
        # A run's three models share one Budget, so their dollars add up to one cap.
        self.budget = budget if budget is not None else Budget(limits)
        self.timeout_s = timeout_s
        self.client = ProviderClient(
            model, api_key=_api_key(model, env), env=env, timeout_s=timeout_s, retry=retry
        )
        self.cases: dict[int, Usage] = {}

    def for_case(self, index: int) -> CaseHandler:
        meter = self.cases.setdefault(index, Usage())
        handler = make_llm_handler(
            self.model,
            env=self.env,
            budget=self.budget,
            meter=meter,
            timeout_s=self.timeout_s,
            client=self.client,
        )
        return CaseHandler(handler, meter)

    def total(self) -> dict | None:
        """The usage of the whole check (every case added up)."""
        total = Usage()
        for usage in self.cases.values():
            total.model_calls += usage.model_calls
            total.input_tokens += usage.input_tokens
            total.output_tokens += usage.output_tokens
            total.cost_usd += usage.cost_usd
            total.model_ms += usage.model_ms
        return total.as_dict()

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> ModelGateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def gateway_for_check(
    catalogue: Catalogue,
    *,
    metric_model: str | None,
    reflection_model: str | None,
    limits: Limits,
    timeout_s: float,
    retry: RetryPolicy | None = None,
) -> ModelGateway | None:
    """The gateway a check uses, by the docs' rule (the metric model, else the reflection
    model); None when neither is chosen. Raises catalogue.ModelChoiceError for an
    unknown or not-configured id."""
    model = resolve_metric_model(catalogue, metric_model, reflection_model)
    if model is None:
        return None
    return ModelGateway(model, env=catalogue.env, limits=limits, timeout_s=timeout_s, retry=retry)


def refusing_handler(code: str, message: str = "") -> LlmHandler:
    """A handler that answers every call with one error. For a check whose stored model
    choice can no longer be used: refusing_handler(exc.code, exc.message) with a
    catalogue.ModelChoiceError gives the metric "not_configured" (message: the variable
    to set) or "unknown_model" (message: the id)."""

    def handle(request: dict) -> dict:
        return {"error": code, "message": message}

    return handle


def _api_key(model: Model, env: Mapping[str, str]) -> str:
    return env.get(model.api_key_env, "").strip() if model.needs_key else ""
