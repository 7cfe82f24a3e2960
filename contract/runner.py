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

import sandbox
from contract.cancel import Cancel
from contract.caseloop import CaseLoop, Channel
from contract.cases import Case
from contract.local_modules import Imports, refine_loaded
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
    "CaseStarter",
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

    def __init__(
        self, config: sandbox.SandboxConfig | None = None, *, preload: str | None = None
    ) -> None:
        self.config = config
        self.preload = preload

    def take(self) -> WarmSandbox:
        return WarmSandbox.start(self.config, preload=self.preload)

    def release(self, warm: WarmSandbox) -> None:
        warm.close()


class Roles:
    """The sandboxes of one check or evaluation when its artifact's run needs another
    kind than its metric (a DSPy program's, with dspy loaded): the first taken, the
    metric's (see take_boxes), comes from `metric`, the rest from `run`."""

    def __init__(self, metric: SandboxSource, run: SandboxSource) -> None:
        self.metric = metric
        self.run = run
        self.taken = 0
        self.runs: set[int] = set()

    def take(self) -> WarmSandbox:
        self.taken += 1
        if self.taken == 1:
            return self.metric.take()
        warm = self.run.take()
        self.runs.add(id(warm))
        return warm

    def release(self, warm: WarmSandbox) -> None:
        if id(warm) in self.runs:
            self.runs.discard(id(warm))
            self.run.release(warm)
        else:
            self.metric.release(warm)


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
    # An evaluation's second scoring of the same output (CaseStarter's second_source),
    # and the ones after it when each output is scored K times (CaseStarter's repeats).
    second: ChildOutcome | None = None
    more: list[ChildOutcome] = field(default_factory=list)


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
        if "dspy" in finished:
            run["dspy"] = finished["dspy"]
    elif finished is not None:
        run["status"] = "error"
        run["problem"], run["params"] = finished["problem"], finished["params"]
        run["exception"], run["traceback"] = finished["exception"], finished["traceback"]
    return run, output


class _Refiner:
    """A metric's "loaded" reports with a missing helper module said as one: the source's
    imports are read (contract.local_modules.Imports) only when a load failed."""

    def __init__(self, source: str, files: dict | None) -> None:
        self.source = source
        self.paths = list(files or ())
        self.imports: Imports | None = None

    def __call__(self, loaded: dict) -> dict:
        load = (loaded.get("stages") or {}).get("load") or {}
        if load.get("status") != "failed":
            return loaded
        if self.imports is None:
            self.imports = Imports.of(self.source, self.paths)
        return refine_loaded(loaded, self.imports)


class CaseStarter:
    """Starts cases on one check's (or evaluation's) sandboxes: each case's metric process,
    and with an artifact its run process first; with `second_source`, a second metric
    process scoring the same output once the first has ended (the second scoring of an
    evaluation: the same metric again, or another version), in `outcome.second`.

    `repeats`: how many times `second_source` scores each output, one fresh process after
    another (a judge scored K times: K - 1); the scorings after the second are in
    `outcome.more`. They run one after the other rather than at once, so a case never
    holds more than one metric process at a time and the window of cases in flight keeps
    its size. The case is reported once every scoring ended; one whose first scoring
    failed is not scored again.

    `files` ({path: text}, contract.files) are metric.py's helper modules, importable
    beside it in every metric process; `second_files` the second source's."""

    def __init__(
        self,
        loop: CaseLoop,
        source: str,
        *,
        timeout_s: float,
        metric_box: WarmSandbox,
        run_box: WarmSandbox | None = None,
        artifact: dict | None = None,
        on_loaded: Callable[[dict], None] | None = None,
        second_source: str | None = None,
        files: dict | None = None,
        second_files: dict | None = None,
        repeats: int = 1,
    ) -> None:
        if repeats < 1:
            raise ValueError("repeats is 1 or more: how many times second_source scores")
        self.loop = loop
        self.source = source
        self.files = dict(files or {})
        self.second_files = dict(second_files or {})
        self.refine = _Refiner(source, self.files)
        self.second_refine = (
            _Refiner(second_source, self.second_files) if second_source is not None else None
        )
        self.timeout_s = timeout_s
        self.metric_box = metric_box
        self.run_box = run_box
        self.artifact = artifact
        self.on_loaded = on_loaded
        self.second_source = second_source
        self.repeats = repeats
        self.cpu = _cpu_seconds(timeout_s)

    def _open_metric(
        self,
        case: Case,
        index: int,
        handler: ModelHandler,
        observation: dict,
        output: dict | None,
        call: bool,
        done: Callable[[Channel], None],
        source: str | None = None,
    ) -> None:
        job = {
            "type": "job",
            "source": source or self.source,
            "filename": "metric.py",
            "case": case.to_job(),
            "observation": observation,
            "call": call,
        }
        files = self.files if source is None else self.second_files
        if files:
            job["files"] = files
        if output is not None:
            job["output"] = output
        loop, timeout_s = self.loop, self.timeout_s
        on_loaded = self.on_loaded if source is None else None
        refine = self.refine if source is None else self.second_refine

        def session(channel: Channel) -> MetricSession:
            return MetricSession(
                timeout_s=timeout_s,
                started=time.monotonic(),
                ask=loop.asker(channel, handler),
                on_loaded=on_loaded,
                call=call,
                refine=refine,
            )

        loop.open(self.metric_box, index, job, self.cpu, session, done)

    def _scored(
        self,
        case: Case,
        index: int,
        handler: ModelHandler,
        observation: dict,
        output: dict | None,
        outcome: ChildOutcome,
        on_case: Callable[[int, ChildOutcome], None],
        metric_before: dict | None = None,
    ) -> None:
        """The first scoring ended: report it, or score the same output again first, as
        many times as `repeats` says, each scoring opened when the one before ended.
        `metric_before`: with an artifact, the metric model's usage before the first
        scoring, so the case's metric usage counts every scoring."""

        def report() -> None:
            if metric_before is not None:
                outcome.metric_usage = usage_delta(metric_before, usage_now(handler))
            on_case(index, outcome)

        stopped = outcome.failure is not None or (self.run_box is not None and output is None)
        if self.second_source is None or stopped:
            report()
            return
        call = output is not None or self.run_box is None
        left = self.repeats

        def again(channel: Channel) -> None:
            nonlocal left
            scoring = _metric_outcome(channel, self.metric_box, observation)
            if outcome.second is None:
                outcome.second = scoring
            else:
                outcome.more.append(scoring)
            left -= 1
            if left and scoring.failure != "cancelled":
                score_again()
            else:
                report()

        def score_again() -> None:
            self._open_metric(
                case, index, handler, observation, output, call, again, self.second_source
            )

        score_again()

    def start(
        self,
        index: int,
        case: Case,
        handler: ModelHandler,
        on_case: Callable[[int, ChildOutcome], None],
        task: ModelHandler | None = None,
    ) -> None:
        """Start case `index`; on_case(index, outcome) when all its processes ended."""
        metric_box, run_box = self.metric_box, self.run_box
        if run_box is None:
            observation = case.measured()

            def metric_done(channel: Channel) -> None:
                outcome = _metric_outcome(channel, metric_box, observation)
                self._scored(case, index, handler, observation, None, outcome, on_case)

            self._open_metric(case, index, handler, observation, None, True, metric_done)
            return
        task = task or default_task_llm
        before = usage_now(task)
        loop, timeout_s = self.loop, self.timeout_s

        def program(channel: Channel) -> ProgramSession:
            return ProgramSession(
                timeout_s=timeout_s,
                started=time.monotonic(),
                input=case.input,
                send=channel.send,
                ask=loop.asker(channel, task),
            )

        def run_done(channel: Channel) -> None:
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
            metric_before = usage_now(handler)

            def metric_done(metric: Channel) -> None:
                outcome = _metric_outcome(metric, metric_box, observation)
                outcome.run = run
                # What the run printed comes first.
                outcome.stdout = channel.stdout.text() + outcome.stdout
                outcome.stderr = channel.stderr.text() + outcome.stderr
                outcome.stdout_truncated += channel.stdout.truncated
                outcome.stderr_truncated += channel.stderr.truncated
                outcome.stdout_printed += channel.stdout.printed
                outcome.stderr_printed += channel.stderr.printed
                self._scored(
                    case, index, handler, observation, output, outcome, on_case, metric_before
                )

            self._open_metric(
                case, index, handler, observation, output, output is not None, metric_done
            )

        job = {"type": "run", "artifact": self.artifact}
        loop.open(run_box, index, job, self.cpu, program, run_done)


def take_boxes(
    sandboxes: SandboxSource, with_artifact: bool, boxes: list[WarmSandbox]
) -> tuple[WarmSandbox, WarmSandbox | None]:
    """The metric's sandbox, and the run's with an artifact (added to `boxes` as taken, so
    the caller gives back whatever was taken). Raises WarmStartFailed."""
    metric_box = sandboxes.take()
    boxes.append(metric_box)
    run_box = None
    if with_artifact:
        run_box = sandboxes.take()
        boxes.append(run_box)
    return metric_box, run_box


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
    files: dict | None = None,
) -> None:
    """Run every case; `on_case(index, outcome)` as each one ends (in any order).
    Setting `cancel` ends the cases still running as "cancelled". `files`: metric.py's
    helper modules ({path: text}, contract.files), importable beside it.

    handlers[i] answers case i's metric llm() calls, task_handlers[i] its run's. Raises
    SandboxUnavailable when no sandbox can be had here, ValueError for a case that cannot
    be sent. Never leaves a process behind.
    """
    boxes: list[WarmSandbox] = []
    loop = CaseLoop(max_model_calls=max(2, 2 * len(cases)), cancel=cancel)
    try:
        try:
            metric_box, run_box = take_boxes(sandboxes, artifact is not None, boxes)
        except WarmStartFailed as exc:
            for index in range(len(cases)):
                on_case(
                    index, ChildOutcome(failure="crashed", failure_params=crash_params(exc.reason))
                )
            return
        starter = CaseStarter(
            loop,
            source,
            timeout_s=timeout_s,
            metric_box=metric_box,
            run_box=run_box,
            artifact=artifact,
            on_loaded=on_loaded,
            files=files,
        )
        tasks = task_handlers or [None] * len(cases)
        for index, case in enumerate(cases):
            starter.start(index, case, handlers[index], on_case, tasks[index])
        loop.run()
    finally:
        loop.close()
        for warm in boxes:
            # Dead already for the check: no case answers any more, whatever is still in
            # the sandbox; the source kills it (at once, or in its own thread).
            sandboxes.release(warm)
