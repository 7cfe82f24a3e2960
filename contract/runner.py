"""A check's cases, all at once, in warm sandboxes: who runs what, and what it yields.

`run_cases()` takes a warm sandbox for the metric (and one more for the artifact's run
code, so the two never share even a namespace), opens every case at once on the case
loop (contract.caseloop) and hands each case's outcome to `on_case` as soon as it is
known. With an artifact, a case's metric process starts the moment its run finished,
with the run's output as data and the worker's measurements of it; a run that ended by
itself (returned or raised) still has the metric loaded, so the load stages are
reported, but only a returned output is scored.

Each case's process gets the full time limit for loading and again for calling (for the
program and again for its run); a case that times out does not hold up the others.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from contract import sandbox
from contract.cancel import Cancel
from contract.caseloop import CaseLoop, Channel
from contract.cases import Case
from contract.metering import measured, usage_delta, usage_now
from contract.protocol import (
    MetricOutcome,
    MetricSession,
    ModelHandler,
    ProgramSession,
    crash_params,
    loaded_is_final,
)
from contract.warm import WarmSandbox, WarmStartFailed

LlmHandler = ModelHandler

__all__ = [
    "ChildOutcome",
    "LlmHandler",
    "OnDemand",
    "SandboxSource",
    "default_llm",
    "default_task_llm",
    "loaded_is_final",
    "run_cases",
]


def default_llm(request: dict) -> dict:
    """No metric model is configured yet: every request fails with a code."""
    return {"error": "no_metric_model", "message": ""}


def default_task_llm(request: dict) -> dict:
    """No task model is configured: every request of the artifact's run fails with a code."""
    return {"error": "no_task_model", "message": ""}


class SandboxSource(Protocol):
    """Where a check gets its warm sandboxes (contract.warm.WarmPool, or OnDemand), and
    gives them back to be killed."""

    def take(self) -> WarmSandbox: ...

    def release(self, warm: WarmSandbox) -> None: ...


class OnDemand:
    """Start a sandbox when a check asks for one, kill it when given back: the command
    line and the tests."""

    def __init__(self, config: sandbox.SandboxConfig | None = None) -> None:
        self.config = config

    def take(self) -> WarmSandbox:
        return WarmSandbox.start(self.config)

    def release(self, warm: WarmSandbox) -> None:
        warm.close()


@dataclass
class ChildOutcome(MetricOutcome):
    """What one case's processes did: its metric process's outcome (contract.protocol;
    `phase` is "run" when the case ended in the artifact's run and no metric process
    started), what they printed, and with an artifact the run's report ({status,
    duration_ms, usage, output_repr, problem, params, exception, traceback}), the worker's
    measurements of it (`observation`) and what the metric's handler used."""

    stdout: str = ""
    stderr: str = ""
    stdout_truncated: int = 0
    stderr_truncated: int = 0
    stdout_printed: int = 0
    stderr_printed: int = 0
    observation: dict = field(default_factory=dict)
    run: dict | None = None
    metric_usage: dict | None = None


def _cpu_seconds(timeout_s: float) -> int:
    """A case process's CPU limit: its two windows, plus one second (a backstop to the
    worker's clock, which ends it first)."""
    return math.ceil(2 * timeout_s) + 1


def _output(outcome: ChildOutcome, channel: Channel) -> None:
    outcome.stdout += channel.stdout.text()
    outcome.stderr += channel.stderr.text()
    outcome.stdout_truncated += channel.stdout.truncated
    outcome.stderr_truncated += channel.stderr.truncated
    outcome.stdout_printed += channel.stdout.printed
    outcome.stderr_printed += channel.stderr.printed


def _metric_outcome(channel: Channel, warm: WarmSandbox, observation: dict) -> ChildOutcome:
    got = channel.session.outcome
    outcome = ChildOutcome(
        layers=list(dict.fromkeys([*warm.layers, *got.layers])),
        loaded=got.loaded,
        result=got.result,
        failure=got.failure,
        failure_params=got.failure_params,
        phase=got.phase,
        duration_ms=got.duration_ms,
        observation=observation,
    )
    _output(outcome, channel)
    return outcome


def _run_report(
    channel: Channel, before: dict | None, after: dict | None
) -> tuple[dict, dict | None]:
    """The run's report, and its output (skynet.values data) when it returned."""
    got = channel.session.outcome
    stopped = got.finished_at or time.monotonic()
    duration = None if got.started_at is None else (stopped - got.started_at) * 1000
    run = {
        "status": "ok",
        "duration_ms": duration,
        "usage": usage_delta(before, after),
        "output_repr": None,
        "problem": None,
        "params": {},
        "exception": None,
        "traceback": [],
    }
    output = None
    finished = got.finished
    if got.failure is not None:
        run["status"] = "timeout" if got.failure[0] == "timeout" else "error"
        run["problem"], run["params"] = got.failure
    elif finished is not None and finished["outcome"] == "returned":
        run["output_repr"] = finished["output_repr"]
        output = finished["output"]
    elif finished is not None:
        run["status"] = "error"
        run["problem"], run["params"] = finished["problem"], finished["params"]
        run["exception"], run["traceback"] = finished["exception"], finished["traceback"]
    return run, output


def run_cases(
    source: str,
    cases: list[Case],
    *,
    timeout_s: float,
    handlers: list[ModelHandler],
    on_case: Callable[[int, ChildOutcome], None],
    on_loaded: Callable[[dict], None] | None = None,
    sandboxes: SandboxSource,
    artifact: dict | None = None,
    task_handlers: list[ModelHandler] | None = None,
    cancel: Cancel | None = None,
) -> None:
    """Run every case; `on_case(index, outcome)` as each one ends (in any order).
    Setting `cancel` ends the cases still running as "cancelled".

    handlers[i] answers case i's metric llm() calls, task_handlers[i] its run's. Raises
    SandboxUnavailable when no sandbox can be had here, ValueError for a case that cannot
    be sent. Never leaves a process behind.
    """
    boxes: list[WarmSandbox] = []
    loop = CaseLoop(max_model_calls=max(2, 2 * len(cases)), cancel=cancel)
    try:
        try:
            metric_box = sandboxes.take()
            boxes.append(metric_box)
            run_box = None
            if artifact is not None:
                run_box = sandboxes.take()
                boxes.append(run_box)
        except WarmStartFailed as exc:
            for index in range(len(cases)):
                on_case(
                    index, ChildOutcome(failure="crashed", failure_params=crash_params(exc.reason))
                )
            return
        cpu = _cpu_seconds(timeout_s)

        def open_metric(
            index: int, observation: dict, output: dict | None, call: bool, done
        ) -> None:
            case = cases[index]
            job = {
                "type": "job",
                "source": source,
                "filename": "metric.py",
                "case": case.to_job(),
                "observation": observation,
                "call": call,
            }
            if output is not None:
                job["output"] = output

            def session(channel: Channel) -> MetricSession:
                return MetricSession(
                    timeout_s=timeout_s,
                    started=time.monotonic(),
                    ask=loop.asker(channel, handlers[index]),
                    on_loaded=on_loaded,
                    call=call,
                )

            loop.open(metric_box, index, job, cpu, session, done)

        for index in range(len(cases)):
            if run_box is None:

                def metric_done(channel: Channel, index: int = index) -> None:
                    on_case(index, _metric_outcome(channel, metric_box, cases[index].measured()))

                open_metric(index, cases[index].measured(), None, True, metric_done)
                continue
            task = (task_handlers or [None] * len(cases))[index] or default_task_llm
            before = usage_now(task)

            def program(channel: Channel, index: int = index, task=task) -> ProgramSession:
                return ProgramSession(
                    timeout_s=timeout_s,
                    started=time.monotonic(),
                    input=cases[index].input,
                    send=channel.send,
                    ask=loop.asker(channel, task),
                )

            def run_done(channel: Channel, index: int = index, task=task, before=before) -> None:
                after = usage_now(task)
                run, output = _run_report(channel, before, after)
                got = channel.session.outcome
                observation = measured(run["duration_ms"], before, after, got.calls)
                if output is None and (got.failure is not None or got.finished is None):
                    # Killed or timed out while running: metric.py was never reached.
                    outcome = ChildOutcome(phase="run", layers=list(run_box.layers))
                    outcome.failure = run["status"] if run["status"] == "timeout" else "crashed"
                    outcome.failure_params = run["params"]
                    outcome.run, outcome.observation = run, observation
                    _output(outcome, channel)
                    on_case(index, outcome)
                    return
                metric_before = usage_now(handlers[index])

                def metric_done(metric: Channel) -> None:
                    outcome = _metric_outcome(metric, metric_box, observation)
                    outcome.run = run
                    outcome.metric_usage = usage_delta(metric_before, usage_now(handlers[index]))
                    # What the run printed comes first.
                    outcome.stdout = channel.stdout.text() + outcome.stdout
                    outcome.stderr = channel.stderr.text() + outcome.stderr
                    outcome.stdout_truncated += channel.stdout.truncated
                    outcome.stderr_truncated += channel.stderr.truncated
                    outcome.stdout_printed += channel.stdout.printed
                    outcome.stderr_printed += channel.stderr.printed
                    on_case(index, outcome)

                open_metric(index, observation, output, output is not None, metric_done)

            loop.open(run_box, index, {"type": "run", "artifact": artifact}, cpu, program, run_done)
        loop.run()
    finally:
        loop.close()
        for warm in boxes:
            # Dead already for the check: no case answers any more, whatever is still in
            # the sandbox; the source kills it (at once, or in its own thread).
            sandboxes.release(warm)
