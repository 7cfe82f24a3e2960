"""The run's stops besides gepa's own (its metric-call budget, and the `gepa.stop` file
in the run directory): the user's Cancel, the run's dollar budget across its three
models, and what is left of its metric calls. gepa asks each stopper before every
iteration; `fired` says which one stopped it."""

from __future__ import annotations

from contract.cancel import Cancel
from engines.calls import MetricCalls
from engines.models import ProviderWatch
from providers.budget import Budget

# Below this many dollars left, no model call can be made that is worth making.
USD_EPSILON = 1e-6


class CancelStopper:
    def __init__(self, cancel: Cancel) -> None:
        self.cancel = cancel
        self.fired = False

    def __call__(self, state: object) -> bool:
        self.fired = self.fired or self.cancel.is_set()
        return self.fired


class SpendStopper:
    """Stops once the shared Budget's dollars are spent, or a call was refused for them:
    gepa's max_reflection_cost covers the reflection model alone."""

    def __init__(self, budget: Budget, watch: ProviderWatch) -> None:
        self.budget = budget
        self.watch = watch
        self.fired = False

    def __call__(self, state: object) -> bool:
        left = self.budget.limits.max_usd - self.budget.usd
        self.fired = self.fired or left <= USD_EPSILON or self.watch.refused_for_budget
        return self.fired


class WatchStopper:
    """Stops once a model's provider kept failing (models.ProviderWatch)."""

    def __init__(self, watch: ProviderWatch) -> None:
        self.watch = watch

    def __call__(self, state: object) -> bool:
        return self.watch.failed is not None


class PerfectStopper:
    """Stops once a candidate scores `perfect` (gepa's perfect_score) on every validation
    case: gepa skips reflecting on a minibatch that is all perfect, so what budget is left
    would only be spent sampling minibatches of a candidate it can no longer improve."""

    def __init__(self, perfect: float = 1.0) -> None:
        self.perfect = perfect
        self.fired = False

    def __call__(self, state) -> bool:
        scores = getattr(state, "prog_candidate_val_subscores", None) or []
        self.fired = self.fired or any(
            s and all(float(v) >= self.perfect for v in s.values()) for s in scores
        )
        return self.fired


class CallsStopper:
    """Stops before an iteration that could not find a candidate within the metric calls
    left: an iteration first scores its parent on a minibatch and then the proposal on
    the same minibatch, so with fewer than two minibatches left the proposal's batch would
    be refused (calls.MetricCalls) after the parent's was paid for, for nothing."""

    def __init__(self, calls: MetricCalls, minibatch_size: int) -> None:
        self.calls = calls
        self.needed = 2 * max(1, minibatch_size)
        self.fired = False

    def __call__(self, state) -> bool:
        self.calls.catch_up(int(getattr(state, "total_num_evals", 0) or 0))
        self.fired = self.fired or self.calls.left < self.needed
        return self.fired
