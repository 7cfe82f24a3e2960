"""The two kinds of child a check runs, as protocols over contract.process.

`run_metric()`: metric.py on one case. The child loads it and reports what loading did
as data ("loaded"); the worker derives the load, signature and REWARD_SPEC stages from
that (contract.frames), serves score()'s llm() requests, and judges the value the child
describes ("result") on its own clock. Loading and calling each get the full time limit.

`run_program()`: the artifact's run(artifact, input) on one case, in a child of its own.
The child loads the program, the worker sends the input and starts its clock, serves the
run's llm() requests with the task model's handler and stops the clock at "run_finished".
Cost and tokens come from that handler's usage(), never from the child. The output comes
back as data and goes, with the worker's measurements, to a fresh metric child: nothing
the run code does can reach the metric's process or what it is told was measured.

A child that exits, dies or stops talking before it finished is "crashed", never a pass;
one that outlives its time is "timeout".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from contract import frames, sandbox
from contract.artifacts import check_run_finished, usage_delta, usage_now
from contract.cases import Case
from contract.process import ChildProcess, Ending, crash_params
from skynet import OBSERVATION_KEYS, wire

LlmHandler = Callable[[dict], dict]

__all__ = [
    "ChildOutcome",
    "LlmHandler",
    "RunOutcome",
    "crash_params",
    "default_llm",
    "default_task_llm",
    "loaded_is_final",
    "run_metric",
    "run_program",
]


def default_llm(request: dict) -> dict:
    """No metric model is configured yet: every request fails with a code."""
    return {"error": "no_metric_model", "message": ""}


def default_task_llm(request: dict) -> dict:
    """No task model is configured: every request of the artifact's run fails with a code."""
    return {"error": "no_task_model", "message": ""}


@dataclass
class ChildOutcome:
    """What one case's children did. `phase` is where the metric child was when it ended:
    "load" until the "loaded" frame arrived, "call" after it ("run" when only the run
    child ran).

    With an artifact, `run` is the run's report ({status, duration_ms, usage,
    output_repr, problem, params, exception, traceback}), `observation` the worker's
    measurements of it and `metric_usage` what the metric handler used."""

    layers: list[str] = field(default_factory=list)
    loaded: dict | None = None
    result: dict | None = None
    failure: str | None = None  # None, "timeout" or "crashed"
    failure_params: dict = field(default_factory=dict)
    phase: str = "load"
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: int = 0
    stderr_truncated: int = 0
    parent_duration_ms: float | None = None
    observation: dict = field(default_factory=dict)
    run: dict | None = None
    metric_usage: dict | None = None


@dataclass
class RunOutcome:
    """What one run child did: its report, its output (skynet.values data) when it
    returned, and the worker's measurements of it (the metric's observation)."""

    run: dict
    output: dict | None
    observation: dict
    layers: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: int = 0
    stderr_truncated: int = 0

    @property
    def finished(self) -> bool:
        """The run reported an end of its own (returned or raised), not a crash/timeout."""
        return self.run["status"] != "timeout" and self.run["problem"] not in ("crashed",)


def loaded_is_final(loaded: dict) -> bool:
    """True when score() will not be called after this "loaded" report."""
    stages = loaded["stages"]
    return (
        loaded.get("call_args") not in (2, 3)
        or stages["load"]["status"] != "passed"
        or stages["signature"]["status"] != "passed"
        or stages["reward_spec"]["status"] == "failed"
    )


def _llm_reply(handler: LlmHandler, frame: dict) -> dict:
    """Answer one skynet.llm() request with the handler's {"text"} or {"error", "message"}.

    The handler runs synchronously in the loop: its time counts against the call's
    limit, and the clock is checked again as soon as it returns.
    """
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


def _job(payload: dict) -> Callable[[dict], bytes]:
    def build(limits: dict) -> bytes:
        try:
            return wire.encode({**payload, "limits": limits}, limit=wire.MAX_JOB_FRAME)
        except wire.ProtocolError:
            raise ValueError("job_too_large") from None
        except (TypeError, ValueError):
            raise ValueError("case_not_json") from None

    return build


def _ended(outcome: ChildOutcome | RunOutcome, child: ChildProcess) -> None:
    outcome.stdout, outcome.stderr = child.stdout, child.stderr
    outcome.stdout_truncated, outcome.stderr_truncated = (
        child.stdout_truncated,
        child.stderr_truncated,
    )


# -- metric.py on one case --------------------------------------------------------------


class _Metric:
    def __init__(self, child: ChildProcess, timeout_s: float, on_llm, on_loaded, call: bool):
        self.child = child
        self.timeout_s = timeout_s
        self.on_llm = on_llm
        self.on_loaded = on_loaded
        self.call = call
        self.outcome = ChildOutcome()
        self.state = "start"
        self.deadline = time.monotonic() + timeout_s
        self.loaded_at = 0.0

    def handle(self, frame: dict) -> bool:
        kind = frame["type"]
        if kind == "fatal":
            reason = frame.get("reason")
            reason = reason if reason in ("confine_failed", "internal") else "internal"
            return self._crash(crash_params(reason))
        if self.state == "start" and kind == "ready":
            self.outcome.layers = frames.check_ready(frame)
            self.state = "load"
            return False
        if self.state in ("load", "call") and kind == "llm":
            self.child.send(_llm_reply(self.on_llm, frame))
            return False
        if self.state == "load" and kind == "loaded":
            loaded = frames.judge_loaded(frame)
            self.outcome.loaded = loaded
            self.outcome.phase = self.state = "call"
            self.loaded_at = time.monotonic()
            # Loading and calling each get the full time limit.
            self.deadline = self.loaded_at + self.timeout_s
            if self.on_loaded is not None:
                self.on_loaded(loaded)
            return loaded_is_final(loaded) or not self.call
        if self.state == "call" and kind == "result":
            duration_ms = (time.monotonic() - self.loaded_at) * 1000
            self.outcome.result = frames.judge_result(frame, duration_ms)
            self.outcome.parent_duration_ms = duration_ms
            return True
        raise wire.ProtocolError("unexpected_frame")

    def _crash(self, params: dict) -> bool:
        self.outcome.failure, self.outcome.failure_params = "crashed", params
        return True

    def ended(self, ending: Ending) -> None:
        if ending.kind == "timeout":
            self.outcome.failure = "timeout"
            self.outcome.failure_params = {"seconds": self.timeout_s}
        elif ending.kind == "crashed" and self.outcome.failure is None:
            self.outcome.failure, self.outcome.failure_params = "crashed", ending.params


def run_metric(
    source: str,
    case: Case,
    *,
    timeout_s: float,
    on_llm: LlmHandler | None = None,
    on_loaded: Callable[[dict], None] | None = None,
    sandbox_config: sandbox.SandboxConfig | None = None,
    output: dict | None = None,
    observation: dict | None = None,
    call: bool = True,
) -> ChildOutcome:
    """Run score() of `source` on `case` in a new child; always returns, never leaves a process.

    on_llm answers the child's skynet.llm() requests (default: no_metric_model);
    on_loaded is called with the "loaded" report as soon as it arrives. `output` (a run's
    output as skynet.values data) replaces the case's given output, `observation` its
    recorded measurements; with `call` False the metric is only loaded. Raises
    SandboxUnavailable when no sandbox can be had here, ValueError for a case that
    cannot be sent, OSError when no child can start.
    """
    seen = case.measured() if observation is None else dict(observation)
    payload = {
        "type": "job",
        "source": source,
        "filename": "metric.py",
        "case": case.to_job(),
        "observation": seen,
        "call": call,
    }
    if output is not None:
        payload["output"] = output
    child = ChildProcess.start(
        _job(payload), timeout_s=2 * timeout_s, sandbox_config=sandbox_config
    )
    session = _Metric(child, timeout_s, on_llm or default_llm, on_loaded, call)
    session.outcome.observation = seen
    try:
        session.ended(child.serve(session.handle, lambda: session.deadline))
    finally:
        child.end()
    _ended(session.outcome, child)
    session.outcome.layers = list(dict.fromkeys([*child.launch.layers, *session.outcome.layers]))
    return session.outcome


# -- the artifact's run on one case ----------------------------------------------------


class _Program:
    def __init__(self, child: ChildProcess, timeout_s: float, on_task_llm, input: object):
        self.child = child
        self.timeout_s = timeout_s
        self.on_task_llm = on_task_llm
        self.input = input
        self.state = "start"
        self.deadline = time.monotonic() + timeout_s
        self.started_at: float | None = None
        self.calls = 0
        self.finished: dict | None = None
        self.finished_at: float | None = None
        self.failure: tuple[str, dict] | None = None
        self.layers: list[str] = []

    def handle(self, frame: dict) -> bool:
        kind = frame["type"]
        if kind == "fatal":
            reason = frame.get("reason")
            reason = reason if reason in ("confine_failed", "internal") else "internal"
            self.failure = ("crashed", crash_params(reason))
            return True
        if self.state == "start" and kind == "ready":
            self.layers = frames.check_ready(frame)
            self.state = "program"
            return False
        if self.state in ("program", "run") and kind == "llm":
            self.calls += 1
            self.child.send(_llm_reply(self.on_task_llm, frame))
            return False
        if self.state == "program" and kind == "program_loaded":
            # The clock starts as the input leaves: the program could not see it before.
            self.child.send({"type": "input", "input": self.input})
            self.started_at = time.monotonic()
            self.deadline = self.started_at + self.timeout_s
            self.state = "run"
            return False
        if self.state in ("program", "run") and kind == "run_finished":
            self.finished_at = time.monotonic()
            self.finished = check_run_finished(frame)
            return True
        raise wire.ProtocolError("unexpected_frame")

    def ended(self, ending: Ending) -> None:
        if self.failure is not None or ending.kind == "done":
            return
        if ending.kind == "timeout":
            self.failure = ("timeout", {"seconds": self.timeout_s})
        else:
            self.failure = ("crashed", ending.params)


def _measured(duration_ms: float | None, used: dict | None, calls: int) -> dict:
    """The observation score() sees: the worker's clock and the task handler's usage."""
    if used is None:
        # A handler that does not count: only the requests served here are known.
        return {
            "duration_ms": duration_ms,
            "cost_usd": None,
            "model_calls": calls,
            "input_tokens": None,
            "output_tokens": None,
        }
    return {
        "duration_ms": duration_ms,
        "cost_usd": round(used["cost_usd"], 10),
        "model_calls": used["model_calls"],
        "input_tokens": used["input_tokens"],
        "output_tokens": used["output_tokens"],
    }


def run_program(
    artifact: dict,
    case: Case,
    *,
    timeout_s: float,
    on_task_llm: LlmHandler | None = None,
    sandbox_config: sandbox.SandboxConfig | None = None,
) -> RunOutcome:
    """Run the artifact (Artifact.to_job()) on the case's input in a new child.

    The program's load and the run each get `timeout_s`; on_task_llm answers the run's
    llm() calls (default: no_task_model). Always returns, never leaves a process; raises
    like run_metric().
    """
    handler = on_task_llm or default_task_llm
    before = usage_now(handler)
    child = ChildProcess.start(
        _job({"type": "run", "artifact": artifact}),
        timeout_s=2 * timeout_s,
        sandbox_config=sandbox_config,
    )
    session = _Program(child, timeout_s, handler, case.input)
    try:
        session.ended(child.serve(session.handle, lambda: session.deadline))
    finally:
        child.end()
    after = usage_now(handler)
    used = None
    if before is not None and after is not None:
        used = {key: after[key] - before[key] for key in after}
    started, stopped = session.started_at, session.finished_at or time.monotonic()
    duration_ms = None if started is None else (stopped - started) * 1000
    run = {
        "status": "ok",
        "duration_ms": duration_ms,
        "usage": usage_delta(before, after),
        "output_repr": None,
        "problem": None,
        "params": {},
        "exception": None,
        "traceback": [],
    }
    output = None
    finished = session.finished
    if session.failure is not None:
        run["status"] = "timeout" if session.failure[0] == "timeout" else "error"
        run["problem"], run["params"] = session.failure
    elif finished is not None and finished["outcome"] == "returned":
        run["output_repr"] = finished["output_repr"]
        output = finished["output"]
    elif finished is not None:
        run["status"] = "error"
        run["problem"], run["params"] = finished["problem"], finished["params"]
        run["exception"], run["traceback"] = finished["exception"], finished["traceback"]
    observation = _measured(duration_ms, used, session.calls)
    outcome = RunOutcome(run=run, output=output, observation=observation)
    _ended(outcome, child)
    outcome.layers = list(dict.fromkeys([*child.launch.layers, *session.layers]))
    return outcome


def unmeasured() -> dict:
    return dict.fromkeys(OBSERVATION_KEYS)
