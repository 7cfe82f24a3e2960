"""Holding an API request until its object changes: the one bound on how long, and the
user's share of held requests (jobs.longpoll), for checks, evaluations and runs alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from jobs import longpoll

T = TypeVar("T")

# How long one wait request may be held at most; the client asks again after it.
WAIT_MAX_S = 30.0


def held(request, timeout: float, current: T, wait: Callable[[float], T]) -> T:
    """`wait(seconds)` for at most `timeout` (bounded by WAIT_MAX_S), or `current` at once
    when there is no time to wait or the user's share of held requests is taken."""
    seconds = max(0.0, min(timeout, WAIT_MAX_S))
    if seconds <= 0:
        return current
    with longpoll.turn(request.user.pk) as may_wait:
        return wait(seconds) if may_wait else current
