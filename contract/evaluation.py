"""A metric over many cases: the contract check's case processes, a window at a time.

`evaluate()` takes a warm sandbox for the metric (and one for the artifact's run code),
as a check does, and keeps `window` cases in flight on one case loop: each case is a
fresh process forked by the sandbox (with an artifact, its run first, in the other
sandbox), and as each ends the next one starts. Cases come from an iterator and leave
through `on_scored` as they end, so memory holds only the cases in flight, whatever the
number of cases. With `second_source`, each case's output is scored again, in a process
of its own, by that metric: the same one again (finding flaky cases) or another version
(comparing the two); with `repeats` more than 1, the second source scores it that many
times, each in a fresh process (a judge scored K times, to measure its own noise).

It stops early, as a whole, when metric.py does not load (the first case to load it
decides, as in the check: every case would fail the same way), when no sandbox can be
had here, or when `cancel` is set; the cases it finished are already reported.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import sandbox
from contract import files as helper_files
from contract.cancel import Cancel
from contract.caseloop import CaseLoop
from contract.cases import Case
from contract.engine import LOAD_STAGES, fill_case, handler_usage, validate_timeout
from contract.hints import is_generic, restates_score
from contract.metering import unmeasured
from contract.results import CaseResult
from contract.runner import (
    CaseStarter,
    ChildOutcome,
    LlmHandler,
    SandboxSource,
    default_llm,
    take_boxes,
)
from contract.source import check_source
from contract.warm import WarmSandbox, WarmStartFailed

DEFAULT_WINDOW = 6


@dataclass
class Scored:
    """One case as it ended: its row as the check would show it, the second scoring's
    row (if any), the output that was scored, the case's wall time on the worker (every
    scoring of it), and the scorings after the second (`more`, with repeats)."""

    index: int
    case: Case
    row: CaseResult
    second: CaseResult | None
    output: object
    total_ms: float
    more: list[CaseResult] = field(default_factory=list)

    @property
    def repeats(self) -> list[CaseResult]:
        """Every scoring after the first, in order: the second, then the ones after it."""
        return [self.second, *self.more] if self.second is not None else []


@dataclass
class Ended:
    """How the evaluation ended: `stopped` is None when every case ran, else
    "load_failed" (params: the failed stage and its problem), "sandbox_unavailable",
    "sandbox_failed" or "cancelled". `layers`: the sandbox's layers, as confirmed."""

    stopped: str | None = None
    params: dict = field(default_factory=dict)
    started: int = 0
    layers: list[str] = field(default_factory=list)


_KIND_ORDER = ("empty", "generic", "specific")


def feedback_kind(feedback: str | None, predictor_feedback: dict | None = None) -> str:
    """How the reflection model would read a feedback: "" (none), "empty", "generic"
    (only right/wrong words, or only the score again), else "specific". With each
    predictor's own feedback, the reflection for each reads its own text: the kind is
    that of the least useful of them."""
    if predictor_feedback:
        kinds = [feedback_kind(text) for text in predictor_feedback.values()]
        return min(kinds, key=_KIND_ORDER.index)
    if feedback is None:
        return ""
    if not feedback.strip():
        return "empty"
    if is_generic(feedback) or restates_score(feedback):
        return "generic"
    return "specific"


def digest(value: object) -> str:
    """16 hex digits that are equal for equal values (strings as they are, the rest as
    sorted JSON): the database groups equal feedbacks and equal outputs by it."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
        except (TypeError, ValueError):
            value = repr(value)
    data = value.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def differs(
    first: CaseResult, second: CaseResult | None, *, feedback: bool = True
) -> tuple[bool, float | None]:
    """Whether two scorings of one output disagree (status, score and, with `feedback`,
    the feedback: the same metric twice must say the same; two versions may word it
    differently), and by how much their scores differ (None unless both have one)."""
    if second is None:
        return False, None
    gap = None
    if first.score is not None and second.score is not None:
        gap = abs(float(first.score) - float(second.score))
    same = (
        first.status == second.status
        and first.problem == second.problem
        and (gap is None or gap <= 1e-9)
        and (first.score is None) == (second.score is None)
        and (not feedback or (first.feedback or "") == (second.feedback or ""))
    )
    return not same, gap


def repeats_differ(
    first: CaseResult, others: list[CaseResult], *, feedback: bool = True
) -> tuple[bool, float | None]:
    """Whether the scorings of one output do not all agree (as `differs` reads a pair:
    status, problem, score, and with `feedback` the first two's feedbacks, the only
    scorings whose whole feedback is kept), and the spread of their valid scores (the
    largest less the smallest; None unless two of them have one)."""
    if not others:
        return False, None
    flagged = differs(first, others[0], feedback=feedback)[0]
    flagged = flagged or any(differs(first, other, feedback=False)[0] for other in others[1:])
    valid = [
        float(row.score)
        for row in (first, *others)
        if row.status == "valid" and row.score is not None
    ]
    gap = max(valid) - min(valid) if len(valid) >= 2 else None
    return flagged, gap


def _load_failure(outcome: ChildOutcome) -> dict | None:
    """The first failed load stage of a case that loaded metric.py, or a case that died
    while loading it; None when it loaded."""
    if outcome.loaded is None:
        if outcome.phase == "run" or outcome.failure is None:
            return None
        return {"stage": "load", "problem": outcome.failure, "params": outcome.failure_params}
    for stage_id in LOAD_STAGES:
        stage = outcome.loaded["stages"][stage_id]
        if stage["status"] == "failed":
            params = {k: v for k, v in stage.get("params", {}).items() if k != "traceback"}
            return {"stage": stage_id, "problem": stage.get("problem"), "params": params}
    return None


def evaluate(
    source: str,
    cases: Iterable[Case],
    *,
    on_scored: Callable[[Scored], None],
    sandboxes: SandboxSource,
    timeout_s: float,
    handler_for: Callable[[int], LlmHandler] | None = None,
    task_handler_for: Callable[[int], LlmHandler] | None = None,
    artifact: dict | None = None,
    second_source: str | None = None,
    window: int = DEFAULT_WINDOW,
    cancel: Cancel | None = None,
    start: int = 0,
    skip: frozenset[int] = frozenset(),
    files: dict[str, str] | None = None,
    second_files: dict[str, str] | None = None,
    repeats: int = 1,
) -> Ended:
    """Score every case of `cases` (any iterable; read as cases start) with metric.py
    `source`, `window` at a time, calling on_scored(Scored) as each ends, in any order.

    handler_for(index) answers case `index`'s metric llm() calls (default: the error
    "no_metric_model"); task_handler_for(index) its artifact run's. `artifact` is an
    Artifact's to_job(). `start`: the index of the first case, when the cases before it
    were scored earlier (an evaluation goes on after another one's turn); `skip`: the
    indexes after it that were scored earlier too (a turn that ended with cases in
    flight wrote the ones that had ended). Never leaves a process behind.

    `files` ({path: text}, contract.files) are metric.py's helper modules, importable
    beside it; `second_files` the second source's (a set past the limits raises
    FilesRefused, a ValueError).

    `repeats`: how many times `second_source` scores each output (1, the default: once,
    in Scored.second); the scorings after the second are Scored.more. A case's wall time
    and its metric model's usage count every scoring.
    """
    if repeats < 1:
        raise ValueError("repeats is 1 or more")
    timeout = validate_timeout(timeout_s)
    helpers = helper_files.clean(files, metric_source=source)
    second_helpers = helper_files.clean(second_files, metric_source=second_source or "")
    for text in (source, second_source):
        if text is not None:
            checked = check_source(text)
            if checked.problem is not None:
                params = {"stage": "load", "problem": checked.problem, "params": checked.params}
                return Ended("load_failed", params)
    stop = Cancel()
    if cancel is not None:
        cancel.on_set(stop.set)
    ended = Ended()
    loop = CaseLoop(max_model_calls=max(2, 2 * window), cancel=stop)
    boxes: list[WarmSandbox] = []
    pending = iter(enumerate(cases, start))
    started_at: dict[int, float] = {}
    handlers: dict[int, LlmHandler] = {}
    decided = False

    def start_next() -> None:
        if stop.is_set():
            return
        try:
            index, case = next(pending)
            while index in skip:
                index, case = next(pending)
        except StopIteration:
            return
        handler = (handler_for(index) if handler_for is not None else None) or default_llm
        task = task_handler_for(index) if task_handler_for is not None else None
        handlers[index] = handler
        started_at[index] = time.monotonic()
        ended.started += 1
        starter.start(index, case, handler, lambda i, outcome: case_ended(i, case, outcome), task)

    def case_ended(index: int, case: Case, outcome: ChildOutcome) -> None:
        nonlocal decided
        handler = handlers.pop(index)
        total_ms = (time.monotonic() - started_at.pop(index)) * 1000
        scorings = [outcome, *([outcome.second] if outcome.second else []), *outcome.more]
        if stop.is_set() and any(got.failure == "cancelled" for got in scorings):
            return  # stopped before every scoring finished: not a result
        ended.layers = outcome.layers or ended.layers
        if not decided and not (outcome.loaded is None and outcome.phase == "run"):
            decided = True
            failure = _load_failure(outcome)
            if failure is not None:
                ended.stopped, ended.params = "load_failed", failure
                stop.set()
                return
        observation = case.measured() if artifact is None else unmeasured()
        row = CaseResult(index=index, observation=observation)
        fill_case(row, outcome)
        row.usage = handler_usage(handler) if artifact is None else outcome.metric_usage
        again = []
        for got in scorings[1:]:
            scoring = CaseResult(index=index, observation=observation)
            fill_case(scoring, got)
            again.append(scoring)
        second = again[0] if again else None
        output = case.output if artifact is None else (row.run or {}).get("output_repr")
        on_scored(Scored(index, case, row, second, output, total_ms, again[1:]))
        start_next()

    try:
        try:
            metric_box, run_box = take_boxes(sandboxes, artifact is not None, boxes)
        except sandbox.SandboxUnavailable as exc:
            return Ended("sandbox_unavailable", {"reason": exc.reason, "detail": exc.detail})
        except WarmStartFailed as exc:
            return Ended("sandbox_failed", {"reason": exc.reason, "detail": exc.detail})
        starter = CaseStarter(
            loop,
            source,
            timeout_s=timeout,
            metric_box=metric_box,
            run_box=run_box,
            artifact=artifact,
            second_source=second_source,
            files=helpers,
            second_files=second_helpers,
            repeats=repeats,
        )
        for _ in range(max(1, window)):
            start_next()
        loop.run()
    finally:
        loop.close()
        for warm in boxes:
            sandboxes.release(warm)
    if ended.stopped is None and cancel is not None and cancel.is_set():
        ended.stopped = "cancelled"
    return ended
