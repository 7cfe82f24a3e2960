"""The run's three models through the worker's gateways: the task model (the
candidate's llm() calls), the metric model (the metric's) and the reflection model
(gepa's proposals), all held to one shared dollar Budget, every call timed, counted and
priced from the catalogue. Keys stay in the gateways.

A provider that keeps failing is not the candidate's fault: `ProviderWatch` wraps each
handler and, after FAILURES_TO_PAUSE provider errors in a row on one model (each of them
already retried by the client, with backoff), asks the run to pause, so that a dead
provider does not score every new candidate 0.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from providers.budget import Usage
from providers.clients import ERROR_CODES

LlmHandler = Callable[[dict], dict]

# Provider errors in a row on one model (each retried by the client) before the run
# pauses, rather than scoring every case 0.
FAILURES_TO_PAUSE = 4
# Errors that are the provider's, not the request's: they pause a run.
PROVIDER_ERRORS = frozenset(ERROR_CODES) - {"bad_request", "refused"}


class ProviderFailed(Exception):
    """A model's provider kept failing: the run pauses and can be resumed."""

    def __init__(self, role: str, code: str, message: str) -> None:
        super().__init__(role, code, message)
        self.role = role
        self.code = code
        self.message = message


class BudgetReached(Exception):
    """The run's dollar budget has no room for another model call."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class ProviderWatch:
    """Counts provider errors in a row per model role; `failed` once one reaches the limit."""

    def __init__(self, limit: int = FAILURES_TO_PAUSE) -> None:
        self.limit = limit
        self.failed: ProviderFailed | None = None
        self.refused_for_budget = False
        self._streak: dict[str, int] = {}
        self._lock = threading.Lock()

    def wrap(self, role: str, handler: LlmHandler) -> LlmHandler:
        def handle(request: dict) -> dict:
            answer = handler(request)
            self.saw(role, answer)
            return answer

        # Keep what the engine reads of a case handler (its usage()).
        for name in ("usage", "meter"):
            if hasattr(handler, name):
                setattr(handle, name, getattr(handler, name))
        return handle

    def saw(self, role: str, answer: dict) -> None:
        code = answer.get("error")
        with self._lock:
            if code is None:
                self._streak[role] = 0
                return
            if code == "budget_exceeded":
                self.refused_for_budget = True
                return
            if code not in PROVIDER_ERRORS:
                return
            self._streak[role] = self._streak.get(role, 0) + 1
            if self._streak[role] >= self.limit and self.failed is None:
                self.failed = ProviderFailed(role, code, str(answer.get("message", ""))[:500])


class ReflectionModel:
    """gepa's reflection LM: a callable from a prompt to the model's text, with
    `total_cost` (gepa's cost stopper reads it) from the catalogue's prices.

    A provider error (after the client's retries) marks the watch failed and a call the
    budget refuses marks it out of budget; either raises too, for gepa to log."""

    def __init__(self, make_handler: Callable[[], LlmHandler], watch: ProviderWatch) -> None:
        self._make = make_handler
        self.watch = watch
        self.usage = Usage()
        self._lock = threading.Lock()

    @property
    def total_cost(self) -> float:
        return self.usage.cost_usd

    @property
    def total_tokens_in(self) -> int:
        return self.usage.input_tokens

    @property
    def total_tokens_out(self) -> int:
        return self.usage.output_tokens

    def __call__(self, prompt: str | list[dict]) -> str:
        if not isinstance(prompt, str):
            prompt = "\n\n".join(str(m.get("content", "")) for m in prompt)
        handler = self._make()
        started = time.monotonic()
        answer = handler({"instructions": prompt, "input": None})
        used = handler.usage() if hasattr(handler, "usage") else None
        with self._lock:
            if used:
                self.usage.model_calls += used.get("model_calls", 0)
                self.usage.input_tokens += used.get("input_tokens", 0)
                self.usage.output_tokens += used.get("output_tokens", 0)
                self.usage.cost_usd += used.get("cost_usd", 0.0)
                self.usage.model_ms += used.get("model_ms", (time.monotonic() - started) * 1000)
        if "text" in answer:
            return answer["text"]
        code, message = answer.get("error", "error"), str(answer.get("message", ""))
        # gepa catches what a reflection raises (and asks once more): the watch is what
        # stops the run, through stoppers.WatchStopper and the adapter's next batch.
        if code == "budget_exceeded":
            self.watch.refused_for_budget = True
            raise BudgetReached(message)
        failed = ProviderFailed("reflection", code, message[:500])
        if self.watch.failed is None:
            self.watch.failed = failed
        raise failed


class RunModels:
    """The gateways of one run's task, metric and reflection models (catalogue Models;
    the task model may be None for a program that calls no model), sharing one Budget
    whose max_usd is the run's dollar budget: no call can take the three together past
    it. Close it when the run ends."""

    def __init__(
        self,
        *,
        task,
        metric,
        reflection,
        env,
        max_usd: float,
        timeout_s: float,
        retry=None,
        watch: ProviderWatch | None = None,
    ) -> None:
        from providers.budget import Budget, Limits
        from providers.gateway import ModelGateway

        self.budget = Budget(Limits(max_calls=10**9, max_tokens=10**13, max_usd=max_usd))
        self.watch = watch or ProviderWatch()
        self.gateways = []

        def gateway(model):
            if model is None:
                return None
            made = ModelGateway(
                model,
                env=env,
                limits=self.budget.limits,
                timeout_s=timeout_s,
                retry=retry,
                budget=self.budget,
            )
            self.gateways.append(made)
            return made

        self.task = gateway(task)
        self.metric = gateway(metric)
        self.reflecting = gateway(reflection)
        self._reflection_calls = 0
        self.reflection = ReflectionModel(self._reflection_handler, self.watch)

    def _reflection_handler(self):
        self._reflection_calls += 1
        handler = self.reflecting.for_case(self._reflection_calls)
        self.reflecting.cases.pop(self._reflection_calls, None)
        return handler

    @property
    def task_for(self):
        return self.task.for_case if self.task is not None else None

    @property
    def metric_for(self):
        return self.metric.for_case if self.metric is not None else None

    def forget(self, index: int) -> None:
        """Drop case `index`'s meters once its usage was read."""
        for made in (self.task, self.metric):
            if made is not None:
                made.cases.pop(index, None)

    def close(self) -> None:
        for made in self.gateways:
            made.close()
