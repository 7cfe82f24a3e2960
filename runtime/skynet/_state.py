"""Per-process state of the helper module: the current case's observation and
the channel to the parent. The child installs both before metric.py runs.

Frames from the parent (llm replies, the run's input) are read by whichever thread holds
`lock`; `receive(kind)` keeps a frame meant for another reader until that one asks, so a
thread in llm() and the main thread waiting for its input never take each other's frame."""

from __future__ import annotations

import _thread
import math
from collections.abc import Mapping
from types import MappingProxyType

from skynet import wire

OBSERVATION_KEYS = ("duration_ms", "cost_usd", "model_calls", "input_tokens", "output_tokens")

_observation: MappingProxyType = MappingProxyType(dict.fromkeys(OBSERVATION_KEYS))
_channel: object | None = None
# Outside a check (the bundle's DSPy adapter): what answers llm() without a channel, and
# what observation() says once about the measurements it cannot have there.
_local_model: object | None = None
_local_note: list[str] = []
# There, dspy scores examples in threads: each thread's own observation.
_here = _thread._local()
# llm() may be called from several metric threads; one request at a time on the socket.
lock = _thread.allocate_lock()


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
    if _local_note:
        import warnings

        warnings.warn(_local_note.pop(), stacklevel=2)
    return getattr(_here, "observation", None) or _observation


def install_here(observation: Mapping | None) -> None:
    """Outside a check: this thread's observation (the DSPy adapter's, one per example);
    None takes it away again, back to the process's."""
    if observation is None:
        _here.__dict__.pop("observation", None)
        return
    _here.observation = MappingProxyType(
        {key: _measure(observation.get(key)) for key in OBSERVATION_KEYS}
    )


def channel() -> object | None:
    return _channel


def local_model() -> object | None:
    return _local_model


def use_locally(model: object | None, note: str = "") -> None:
    """Outside a check: llm() asks `model` (a callable(instructions, input) -> str), and
    the first observation() warns with `note` (what is not measured here)."""
    global _local_model
    _local_model = model
    _local_note[:] = [note] if note else []


_waiting: dict[str, dict] = {}


def receive(kind: str) -> dict | None:
    """The next frame of type `kind` from the parent; call with `lock` held. None at the
    end of the stream. Frames of other types that arrive first are kept for their reader."""
    if kind in _waiting:
        return _waiting.pop(kind)
    while True:
        frame = wire.recv(_channel)  # type: ignore[arg-type]
        if frame is None:
            return None
        if frame["type"] == kind:
            return frame
        if frame["type"] in _waiting:
            raise wire.ProtocolError("unexpected_frame")
        _waiting[frame["type"]] = frame
