"""Metering: what a case's model handlers used, and what the worker measured of a run.

Usage comes from a handler's usage() (providers.gateway.CaseHandler counts every call it
made); the run's duration from the worker's clock (contract.protocol.ProgramSession). The
child is never asked about either.
"""

from __future__ import annotations

import math

from skynet import OBSERVATION_KEYS

USAGE_KEYS = ("model_calls", "input_tokens", "output_tokens", "cost_usd", "model_ms")


def usage_now(handler: object) -> dict | None:
    """The handler's usage() so far as numbers (zeros when it made no call yet); None when
    the handler does not count or its answer is not usable."""
    usage = getattr(handler, "usage", None)
    if not callable(usage):
        return None
    try:
        value = usage()
    except Exception:
        return None
    if value is None:
        return dict.fromkeys(USAGE_KEYS, 0)
    if not isinstance(value, dict):
        return None
    out = {}
    for key in USAGE_KEYS:
        number = value.get(key, 0)
        if type(number) not in (int, float) or not math.isfinite(number) or number < 0:
            return None
        out[key] = number
    return out


def usage_delta(before: dict | None, after: dict | None) -> dict | None:
    """What was used between two usage_now() readings, in CaseResult.usage's form: None
    when nothing is known or no call was made."""
    if before is None or after is None:
        return None
    delta = {key: after[key] - before[key] for key in USAGE_KEYS}
    if delta["model_calls"] <= 0:
        return None
    delta["cost_usd"] = round(delta["cost_usd"], 10)
    delta["model_ms"] = round(delta["model_ms"], 1)
    return delta


def measured(
    duration_ms: float | None, before: dict | None, after: dict | None, calls: int
) -> dict:
    """The observation score() sees of a run: the worker's clock and the task handler's
    usage between `before` and `after`."""
    if before is None or after is None:
        # A handler that does not count: only the requests served here are known.
        return {
            "duration_ms": duration_ms,
            "cost_usd": None,
            "model_calls": calls,
            "input_tokens": None,
            "output_tokens": None,
        }
    used = {key: after[key] - before[key] for key in after}
    return {
        "duration_ms": duration_ms,
        "cost_usd": round(used["cost_usd"], 10),
        "model_calls": used["model_calls"],
        "input_tokens": used["input_tokens"],
        "output_tokens": used["output_tokens"],
    }


def unmeasured() -> dict:
    return dict.fromkeys(OBSERVATION_KEYS)
