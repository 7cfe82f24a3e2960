"""Accounting of model calls: usage per case, and the per-check budget that caps it.

A Budget is shared by every case of one check. Before each call it refuses when a limit
is already reached (BudgetExceeded, which names the limit); after each call it is charged
with the tokens and dollars the call used. A call in flight is never cut short, so the
last call may go past the token or dollar limit; the next one is refused.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

LIMITS = ("calls", "tokens", "usd")


@dataclass(frozen=True)
class Limits:
    """Per-check caps. 0 means none allowed (max_calls=0 turns llm() off)."""

    max_calls: int
    max_tokens: int
    max_usd: float


class BudgetExceeded(Exception):
    """A call refused: `limit` is "calls", "tokens" or "usd"; `maximum` and `used` say how."""

    def __init__(self, limit: str, maximum: float, used: float) -> None:
        super().__init__(limit, maximum, used)
        self.limit = limit
        self.maximum = maximum
        self.used = used

    @property
    def params(self) -> dict:
        return {"limit": self.limit, "max": self.maximum, "used": self.used}

    @property
    def message(self) -> str:
        """Reads the same in every language: the limit's name, its value and what was used."""
        if self.limit == "usd":
            return f"max_usd={self.maximum:g}, used {self.used:.6f}"
        return f"max_{self.limit}={self.maximum:g}, used {self.used:g}"


@dataclass
class Usage:
    """What the model calls of one case (or one check) used."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model_ms: float = 0.0

    def record(
        self, *, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0, ms: float
    ) -> None:
        self.model_calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost_usd += cost_usd
        self.model_ms += ms

    def as_dict(self) -> dict | None:
        """The CaseResult.usage form; None when no call was made."""
        if not self.model_calls:
            return None
        return {
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 10),
            "model_ms": round(self.model_ms, 1),
        }


class Budget:
    """The running total of one check against its Limits; safe to share between threads."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.tokens = 0
        self.usd = 0.0
        self.refused = 0
        self._lock = threading.Lock()

    def reserve(self, *, free: bool = False) -> None:
        """Claim one call, or raise BudgetExceeded naming the first limit reached.

        `free` (a model priced at 0) is never refused for dollars, even at max_usd=0.
        """
        with self._lock:
            exceeded = None
            if self.calls >= self.limits.max_calls:
                exceeded = BudgetExceeded("calls", self.limits.max_calls, self.calls)
            elif self.tokens >= self.limits.max_tokens:
                exceeded = BudgetExceeded("tokens", self.limits.max_tokens, self.tokens)
            elif self.usd >= self.limits.max_usd and not free:
                exceeded = BudgetExceeded("usd", self.limits.max_usd, self.usd)
            if exceeded is not None:
                self.refused += 1
                raise exceeded
            self.calls += 1

    def charge(self, tokens: int, usd: float) -> None:
        with self._lock:
            self.tokens += tokens
            self.usd += usd
