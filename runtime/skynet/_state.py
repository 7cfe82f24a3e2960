"""Per-process state of the helper module: the current case's observation and
the channel to the parent. The child installs both before metric.py runs."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from types import MappingProxyType

OBSERVATION_KEYS = ("duration_ms", "cost_usd", "model_calls", "input_tokens", "output_tokens")

_observation: MappingProxyType = MappingProxyType(dict.fromkeys(OBSERVATION_KEYS))
_channel: object | None = None
# llm() may be called from several metric threads; one request at a time on the socket.
lock = threading.Lock()


def _measure(value: object) -> float | int | None:
    if type(value) in (int, float) and math.isfinite(value) and value >= 0:  # type: ignore[arg-type]
        return value  # type: ignore[return-value]
    return None


def install(channel: object | None, observation: Mapping | None) -> None:
    """Set the channel and the observation; unknown keys and bad values are dropped."""
    global _channel, _observation
    source = observation or {}
    _channel = channel
    _observation = MappingProxyType({key: _measure(source.get(key)) for key in OBSERVATION_KEYS})


def observation() -> MappingProxyType:
    """The current case's measurements, read-only; None where not measured.

    A read-only view is enough: what the parent reports comes from the parent's
    own copy, so nothing the metric does here can change it.
    """
    return _observation


def channel() -> object | None:
    return _channel
