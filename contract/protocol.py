"""The two conversations a case has with its child, as pure code: frames in, frames out.

A session never touches a process, a socket or a clock of its own: the caller feeds it
each frame the child sent (`handle(frame, now)`), sends what it asks to send, reads its
`deadline` and tells it how the child ended (`ended(kind, params)`). So the protocol can be
driven frame by frame in tests, and one loop (contract.caseloop) can serve many children.

`MetricSession`: metric.py on one case.

    child  -> parent  ready(layers)
    child  -> parent  loaded(load, signature, reward_spec)   the worker derives the stages
    child  -> parent  llm*                                    answered through `ask`
    child  -> parent  result(value, repr) | result(raised)    judged by the worker

`ProgramSession`: the artifact's run(artifact, input) on one case.

    child  -> parent  ready(layers)
    child  -> parent  program_loaded                          the input goes out, clock starts
    child  -> parent  llm*                                    the task model's
    child  -> parent  run_finished(output | raised)

Loading and calling (or the program and its run) each get the full time limit. Anything
out of order is a ProtocolError: the caller ends the child as crashed ("protocol").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from contract import frames
from skynet import wire

FATAL_REASONS = ("confine_failed", "internal")


class ModelHandler(Protocol):
    """Answers one skynet.llm() request: {"instructions", "input"} -> {"text"} or
    {"error", "message"}; a conversation (DSPy's LM in a metric) also has "messages"
    (see llm_reply). Handlers that count also have usage() (contract.metering)."""

    def __call__(self, request: dict) -> dict: ...


def crash_params(
    reason: str, exit_code: int | None = None, signal_number: int | None = None
) -> dict:
    """params of a "crashed" problem; the same keys whatever the reason."""
    import signal

    name = None
    if signal_number is not None:
        try:
            name = signal.Signals(signal_number).name
        except ValueError:
            name = None
    return {"reason": reason, "exit_code": exit_code, "signal": signal_number, "signal_name": name}


def llm_reply(handler: ModelHandler, frame: dict) -> dict:
    """The llm_reply frame for one request: the handler's {"text"} or {"error", "message"};
    a handler that raises or answers nonsense is a handler_error for the metric.

    A request with "messages" (a conversation, skynet.wire.chat_messages: DSPy's LM in a
    metric) reaches the handler as {"messages", "instructions": the same conversation as
    one text, "input": None}, so a handler that reads only instructions still answers it;
    one that is not a conversation is answered "protocol" without asking the handler."""
    if "messages" in frame:
        messages = wire.chat_messages(frame.get("messages"))
        if messages is None:
            return {"type": "llm_reply", "error": "protocol", "message": ""}
        request = {"instructions": wire.chat_text(messages), "input": None, "messages": messages}
    else:
        request = {"instructions": frame.get("instructions"), "input": frame.get("input")}
    reply: dict = {"type": "llm_reply", "error": "handler_error", "message": ""}
    try:
        answer = handler(request)
    except Exception:  # the models layer failing is a model error for the metric, not ours
        answer = None
    if isinstance(answer, dict):
        if isinstance(answer.get("text"), str):
            reply = {"type": "llm_reply", "text": answer["text"]}
        elif isinstance(answer.get("error"), str):
            message = answer.get("message")
            reply = {
                "type": "llm_reply",
                "error": answer["error"],
                "message": message if isinstance(message, str) else "",
            }
    try:
        wire.encode(reply)
    except (wire.ProtocolError, ValueError, TypeError):
        return {"type": "llm_reply", "error": "reply_too_large", "message": ""}
    return reply


def loaded_is_final(loaded: dict) -> bool:
    """True when score() will not be called after this "loaded" report."""
    stages = loaded["stages"]
    return (
        loaded.get("call_args") not in (2, 3)
        or stages["load"]["status"] != "passed"
        or stages["signature"]["status"] != "passed"
        or stages["reward_spec"]["status"] == "failed"
    )


@dataclass
class MetricOutcome:
    """What a metric child did. `phase` is "load" until its "loaded" frame, "call" after."""

    layers: list[str] = field(default_factory=list)
    loaded: dict | None = None
    result: dict | None = None
    failure: str | None = None  # None, "timeout" or "crashed"
    failure_params: dict = field(default_factory=dict)
    phase: str = "load"
    duration_ms: float | None = None


class MetricSession:
    """The worker's side of one metric child. `ask(handler, frame)` answers an llm request
    (now or later, through `send`); `send(frame)` queues a frame to the child."""

    def __init__(
        self,
        *,
        timeout_s: float,
        started: float,
        ask: Callable[[dict], None],
        on_loaded: Callable[[dict], None] | None = None,
        call: bool = True,
        refine: Callable[[dict], dict] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.ask = ask
        self.on_loaded = on_loaded
        self.call = call
        # Rewrites the judged "loaded" report with what the parent knows of the source
        # (contract.local_modules: a missing helper module said as one).
        self.refine = refine
        self.outcome = MetricOutcome()
        self.state = "start"
        self.deadline = started + timeout_s
        self.loaded_at = 0.0
        self.finished = False

    def handle(self, frame: dict, now: float) -> bool:
        """Take one frame; True when the exchange is over."""
        kind = frame["type"]
        if kind == "fatal":
            reason = frame.get("reason")
            self._crash(crash_params(reason if reason in FATAL_REASONS else "internal"))
        elif self.state == "start" and kind == "ready":
            self.outcome.layers = frames.check_ready(frame)
            self.state = "load"
        elif self.state in ("load", "call") and kind == "llm":
            self.ask(frame)
        elif self.state == "load" and kind == "loaded":
            loaded = frames.judge_loaded(frame)
            if self.refine is not None:
                loaded = self.refine(loaded)
            self.outcome.loaded = loaded
            self.outcome.phase = self.state = "call"
            self.loaded_at = now
            # Loading and calling each get the full time limit.
            self.deadline = now + self.timeout_s
            if self.on_loaded is not None:
                self.on_loaded(loaded)
            self.finished = loaded_is_final(loaded) or not self.call
        elif self.state == "call" and kind == "result":
            duration_ms = (now - self.loaded_at) * 1000
            self.outcome.result = frames.judge_result(frame, duration_ms)
            self.outcome.duration_ms = duration_ms
            self.finished = True
        else:
            raise wire.ProtocolError("unexpected_frame")
        return self.finished

    def _crash(self, params: dict) -> None:
        self.outcome.failure, self.outcome.failure_params = "crashed", params
        self.finished = True

    def ended(self, kind: str, params: dict | None = None) -> None:
        """The child ended before finishing: "timeout", "cancelled" (the user stopped the
        check), or "crashed" with how."""
        if self.finished:
            return
        self.finished = True
        if kind == "timeout":
            self.outcome.failure = "timeout"
            self.outcome.failure_params = {"seconds": self.timeout_s}
        elif kind == "cancelled":
            self.outcome.failure, self.outcome.failure_params = "cancelled", {}
        else:
            self.outcome.failure, self.outcome.failure_params = "crashed", params or {}


@dataclass
class ProgramOutcome:
    layers: list[str] = field(default_factory=list)
    finished: dict | None = None  # the checked run_finished frame
    failure: tuple[str, dict] | None = None  # ("timeout" | "crashed", params)
    started_at: float | None = None
    finished_at: float | None = None
    calls: int = 0


class ProgramSession:
    """The worker's side of one run child: the input goes out when the program is loaded,
    and the run's duration is the time from then to "run_finished"."""

    def __init__(
        self,
        *,
        timeout_s: float,
        started: float,
        input: object,
        send: Callable[[dict], None],
        ask: Callable[[dict], None],
    ) -> None:
        self.timeout_s = timeout_s
        self.input = input
        self.send = send
        self.ask = ask
        self.outcome = ProgramOutcome()
        self.state = "start"
        self.deadline = started + timeout_s
        self.finished = False

    def handle(self, frame: dict, now: float) -> bool:
        kind = frame["type"]
        if kind == "fatal":
            reason = frame.get("reason")
            self.outcome.failure = (
                "crashed",
                crash_params(reason if reason in FATAL_REASONS else "internal"),
            )
            self.finished = True
        elif self.state == "start" and kind == "ready":
            self.outcome.layers = frames.check_ready(frame)
            self.state = "program"
        elif self.state in ("program", "run") and kind == "llm":
            self.outcome.calls += 1
            self.ask(frame)
        elif self.state == "program" and kind == "program_loaded":
            # The clock starts as the input leaves: the program could not see it before.
            self.send({"type": "input", "input": self.input})
            self.outcome.started_at = now
            self.deadline = now + self.timeout_s
            self.state = "run"
        elif self.state in ("program", "run") and kind == "run_finished":
            self.outcome.finished_at = now
            self.outcome.finished = frames.check_run_finished(frame)
            self.finished = True
        else:
            raise wire.ProtocolError("unexpected_frame")
        return self.finished

    def ended(self, kind: str, params: dict | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        if kind == "timeout":
            self.outcome.failure = ("timeout", {"seconds": self.timeout_s})
        else:
            self.outcome.failure = ("crashed", params or {})
