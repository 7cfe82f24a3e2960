"""Accounting of model calls: usage per case, and the per-check budget that caps it.

A Budget is shared by every case of one check, and no call can take it past a limit.
Before each call the caller works out an upper bound of the prompt's input tokens
(clients.prompt_token_bound) and the Budget, under its lock, reserves that bound plus the
output tokens the call may use: the model's max_output_tokens, or less, so that the
reservation fits in the tokens and dollars left. That output allowance is sent to the
provider as the request's output cap. A call whose allowance would be below one token is
refused (BudgetExceeded, which names the limit) before any request is made. After the
call the reservation is released and the tokens and dollars the provider reported are
charged, which are never more than the reservation: the input bound is never below the
real count and a provider does not write past the cap. Calls in flight hold their reservations, so calls
from several threads cannot overshoot together either.

Dollars are added up exactly (fractions of the float costs), so rounding cannot take the
total past max_usd. A model priced at 0 is never refused for dollars.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from fractions import Fraction

from providers.catalogue import Model

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """Per-check caps. 0 means none allowed (max_calls=0 turns llm() off)."""

    max_calls: int
    max_tokens: int
    max_usd: float


class BudgetExceeded(Exception):
    """A call refused: `limit` is "calls", "tokens" or "usd"; `maximum` and `used` say how
    (`used` counts what was charged and what the calls in flight have reserved)."""

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


@dataclass
class Reservation:
    """What one call may use: `input_tokens` (the prompt's bound) and `output_tokens` (the
    cap to send), and the dollars they could cost at most."""

    input_tokens: int
    output_tokens: int
    usd: Fraction
    open: bool = True

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Budget:
    """The running total of one check against its Limits; safe to share between threads."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.tokens = 0
        self.refused = 0
        self._usd = Fraction(0)
        # What the calls in flight may still use.
        self._reserved_tokens = 0
        self._reserved_usd = Fraction(0)
        self._lock = threading.Lock()

    @property
    def usd(self) -> float:
        """Dollars charged so far."""
        return float(self._usd)

    def spent(self) -> dict:
        """What was charged so far, as JSON data: for Budget.resumed, when the work this
        budget caps stops and goes on later in another process (an evaluation's turns).
        Dollars as an exact fraction, so the sum is the same as if it never stopped."""
        with self._lock:
            return {"calls": self.calls, "tokens": self.tokens, "usd": str(self._usd)}

    @classmethod
    def resumed(cls, limits: Limits, spent: dict | None) -> Budget:
        """A budget of `limits` that has already charged `spent` (Budget.spent()): its
        next call is refused or allowed exactly as it would have been had the work never
        stopped, and a refusal names the same limit and numbers."""
        budget = cls(limits)
        if spent:
            budget.calls = int(spent.get("calls") or 0)
            budget.tokens = int(spent.get("tokens") or 0)
            budget._usd = Fraction(str(spent.get("usd") or 0))
        return budget

    def reserve(self, model: Model, input_tokens: int) -> Reservation:
        """Claim one call of `model` with a prompt of at most `input_tokens` tokens, or
        raise BudgetExceeded naming the first limit it would pass.

        The reservation's output_tokens is the largest cap that keeps the check within
        max_tokens and max_usd even if the call uses all of it. Pass the reservation to
        settle() (or release()) when the call is over.
        """
        with self._lock:
            try:
                reservation = self._fit(model, max(0, input_tokens))
            except BudgetExceeded:
                self.refused += 1
                raise
            self.calls += 1
            self._reserved_tokens += reservation.tokens
            self._reserved_usd += reservation.usd
            return reservation

    def settle(self, reservation: Reservation, *, tokens: int, usd: float) -> None:
        """Release `reservation` and charge what the call used (the provider's counts)."""
        with self._lock:
            self._release(reservation)
            if tokens > reservation.tokens or Fraction(usd) > reservation.usd:
                # Only a provider that writes past the cap, or counts the prompt above
                # its UTF-8 length, gets here; the budget records the truth.
                logger.warning(
                    "a call used %d tokens ($%.6f), more than the %d ($%.6f) reserved",
                    tokens, usd, reservation.tokens, float(reservation.usd),
                )  # fmt: skip
            self.tokens += tokens
            self._usd += Fraction(usd)

    def release(self, reservation: Reservation) -> None:
        """Release `reservation` without a charge: the call failed. Idempotent."""
        with self._lock:
            self._release(reservation)

    def _release(self, reservation: Reservation) -> None:
        if reservation.open:
            reservation.open = False
            self._reserved_tokens -= reservation.tokens
            self._reserved_usd -= reservation.usd

    def _fit(self, model: Model, input_tokens: int) -> Reservation:
        """The reservation of one call, under the lock; BudgetExceeded when none fits."""
        limits = self.limits
        if self.calls >= limits.max_calls:
            raise BudgetExceeded("calls", limits.max_calls, self.calls)
        used_tokens = self.tokens + self._reserved_tokens
        output = min(model.max_output_tokens, limits.max_tokens - used_tokens - input_tokens)
        if output < 1:
            raise BudgetExceeded("tokens", limits.max_tokens, used_tokens)
        free = model.input_usd_per_mtok == 0 and model.output_usd_per_mtok == 0
        if free:
            return Reservation(input_tokens, output, Fraction(0))
        used_usd = self._usd + self._reserved_usd
        output = min(output, _affordable(model, input_tokens, Fraction(limits.max_usd) - used_usd))
        if output < 1:
            raise BudgetExceeded("usd", limits.max_usd, float(used_usd))
        return Reservation(input_tokens, output, _cost_bound(model, input_tokens, output))


def _affordable(model: Model, input_tokens: int, usd_left: Fraction) -> int | float:
    """How many output tokens `usd_left` pays for after the prompt (inf when output is
    free; below 1 when even the prompt does not fit)."""
    input_price = Fraction(model.input_usd_per_mtok) / 10**6
    output_price = Fraction(model.output_usd_per_mtok) / 10**6
    left = usd_left - input_tokens * input_price
    if output_price == 0:
        return math.inf if _cost_bound(model, input_tokens, 0) <= usd_left else 0
    output = math.floor(left / output_price)
    # The charge is Model.cost_usd's float, which can round above the exact price; step
    # down until that float fits too (one step at most, in practice).
    while output >= 1 and _cost_bound(model, input_tokens, output) > usd_left:
        output -= 1
    return output


def _cost_bound(model: Model, input_tokens: int, output_tokens: int) -> Fraction:
    """The most a call within these counts can be charged: the exact price or the float
    Model.cost_usd gives, whichever is larger (the float cost only grows with the counts,
    so the real call's charge is never above it)."""
    exact = (
        input_tokens * Fraction(model.input_usd_per_mtok)
        + output_tokens * Fraction(model.output_usd_per_mtok)
    ) / 10**6
    return max(exact, Fraction(model.cost_usd(input_tokens, output_tokens)))
