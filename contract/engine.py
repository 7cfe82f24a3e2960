"""The contract check: run a metric.py through every stage and report codes.

Stages, in order, stopping at the first that fails: load, signature,
reward_spec, call, return_value. The parent decodes and parses the source;
then each case runs in its own fresh child (contract.runner), one after the
other. The first child's "loaded" report decides load / signature /
reward_spec; all cases run even when one fails, so every row is shown.

With an artifact (contract.artifacts.Artifact), each case first runs it on the
case's input in a child of its own, and a fresh metric child scores what it
returned as `output`; the case row gets a `run` report and the worker's
measurements of the run as its observation. A run that fails (run_error,
run_model_error, a timeout...) is a case error; a run that ended by itself
still has its metric child load metric.py, so the load stages are reported.
When no metric child loaded, they are skipped (reason "run_failed").

When the sandbox cannot be had on this worker (sandbox
SandboxUnavailable), nothing runs: the load stage fails with
"sandbox_unavailable", naming the reason.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence

import sandbox
from contract import files as helper_files
from contract import frameworks, missing_imports
from contract.artifacts import RUN_PROBLEMS, Artifact
from contract.cancel import Cancel
from contract.cases import DEFAULT_CASES, Case
from contract.codes import CHECK_SIDE_MODEL_ERRORS
from contract.hints import (
    EXAMPLE_LIMIT,
    ScoredCase,
    compute_hints,
    feedback_notes,
    printed_hints,
    shown,
)
from contract.looks_like import looks_like
from contract.metering import unmeasured
from contract.parsing import parse as ast_parse
from contract.results import CaseResult, CheckResult, StageResult
from contract.returnline import Returns
from contract.runner import (
    ChildOutcome,
    LlmHandler,
    OnDemand,
    SandboxSource,
    default_llm,
    loaded_is_final,
    run_cases,
)
from contract.source import check_source
from contract.static import static_check

MIN_TIMEOUT_S = 1
MAX_TIMEOUT_S = 600
DEFAULT_TIMEOUT_S = 60
LOAD_STAGES = ("load", "signature", "reward_spec")

ProgressCallback = Callable[[CheckResult], None]

__all__ = ["Artifact", "run_check", "static_check", "validate_timeout"]


def validate_timeout(timeout_s: object) -> float:
    """The per-call time limit as float; ValueError unless a real number in [1, 600]."""
    if type(timeout_s) is bool or not isinstance(timeout_s, numbers.Real):
        raise ValueError("timeout_not_number")
    value = float(timeout_s)
    if not math.isfinite(value) or not MIN_TIMEOUT_S <= value <= MAX_TIMEOUT_S:
        raise ValueError("timeout_out_of_range")
    return value


class _Check:
    """One run of the check: the result being built and the progress callback."""

    def __init__(
        self,
        result: CheckResult,
        on_progress: ProgressCallback | None,
        progress_every_s: float = 0.0,
    ) -> None:
        self.result = result
        self.on_progress = on_progress
        self.progress_every_s = progress_every_s
        self.last_progress = time.monotonic()
        self.bool_scores: dict[int, bool] = {}

    def progress(self) -> None:
        if self.on_progress is None:
            return
        if self.progress_every_s > 0:
            # Decided before the snapshot: a quick check's progress costs no copy at all.
            now = time.monotonic()
            if now - self.last_progress < self.progress_every_s:
                return
            self.last_progress = now
        self.on_progress(self.result.snapshot())

    def set_stage(
        self,
        stage_id: str,
        status: str,
        problem: str | None = None,
        params: dict | None = None,
        problems: list | None = None,
    ) -> StageResult:
        stage = self.result.stage(stage_id)
        stage.status, stage.problem = status, problem
        stage.params, stage.problems = params or {}, problems or []
        return stage

    def fail(self, stage_id: str) -> CheckResult:
        """Stage failed: every later stage and every case not yet run is skipped."""
        self.result.passed, self.result.failed_stage = False, stage_id
        ids = [s.id for s in self.result.stages]
        for stage in self.result.stages[ids.index(stage_id) + 1 :]:
            if stage.status in ("pending", "running"):
                stage.status = "skipped"
        for case in self.result.cases:
            if case.status == "pending":
                case.status = "skipped"
        self.progress()
        return self.result

    def apply_loaded(self, loaded: dict) -> None:
        """Record the first child's load / signature / reward_spec outcomes."""
        for stage_id in LOAD_STAGES:
            stage = loaded["stages"][stage_id]
            self.set_stage(
                stage_id, stage["status"], stage.get("problem"), stage["params"], stage["problems"]
            ).warnings = list(stage.get("warnings") or [])
        if not loaded_is_final(loaded):
            self.set_stage("call", "running")
        self.progress()


def _failed_load_stage(loaded: dict) -> dict | None:
    for stage_id in LOAD_STAGES:
        stage = loaded["stages"][stage_id]
        if stage["status"] == "failed":
            return stage
    return None


def _fill_output(row: CaseResult, outcome: ChildOutcome) -> None:
    row.stdout, row.stderr = outcome.stdout, outcome.stderr
    row.stdout_truncated, row.stderr_truncated = outcome.stdout_truncated, outcome.stderr_truncated
    row.stdout_printed, row.stderr_printed = outcome.stdout_printed, outcome.stderr_printed
    row.observation = outcome.observation
    if outcome.loaded is not None:
        row.call_args = outcome.loaded.get("call_args")


def fill_case(row: CaseResult, outcome: ChildOutcome, returns: Returns | None = None) -> bool:
    """Fill a case row from its child; returns whether the score was a bool."""
    _fill_output(row, outcome)
    row.parent_duration_ms = outcome.duration_ms
    run = outcome.run
    if run is not None:
        row.run = run
    if run is not None and run["problem"] in RUN_PROBLEMS:
        # The artifact's run failed in the child (whatever happened after): score()
        # was not called.
        row.status, row.problem = "error", run["problem"]
        row.params = run["params"]
        row.exception, row.traceback = run["exception"], run["traceback"]
        return False
    if outcome.failure is not None:
        row.status = {"timeout": "timeout", "cancelled": "skipped"}.get(outcome.failure, "error")
        row.problem, row.params = outcome.failure, outcome.failure_params
        return False
    failed = _failed_load_stage(outcome.loaded) if outcome.loaded is not None else None
    if failed is not None:
        # A later child did not load what the first loaded (a non-deterministic module).
        row.status, row.problem = "error", failed["problem"]
        row.params = {k: v for k, v in failed["params"].items() if k != "traceback"}
        row.traceback = failed["params"].get("traceback", [])
        return False
    result = outcome.result or {}
    row.duration_ms = result.get("duration_ms")
    if result.get("outcome") == "raised":
        row.status, row.problem, row.params = "error", result.get("problem"), result["params"]
        row.exception, row.traceback = result.get("exception"), result.get("traceback", [])
        return False
    report = result.get("return", {})
    if returns is not None:
        row.returned_at = returns.line(result.get("returned_from"))
    row.status = "valid" if report.get("problem") is None else "invalid"
    row.problem, row.params = report.get("problem"), report.get("params", {})
    row.score, row.feedback = report.get("score"), report.get("feedback")
    row.feedback_length, row.repr = report.get("feedback_length"), report.get("repr")
    row.scores, row.scores_omitted = report.get("scores", {}), report.get("scores_omitted", 0)
    row.predictor_feedback = report.get("predictor_feedback") or {}
    row.predictor_feedback_omitted = report.get("predictor_feedback_omitted", 0)
    return bool(report.get("bool_score"))


def _first_child(check: _Check, outcome: ChildOutcome, row: CaseResult) -> bool:
    """Apply what only the first child (to load metric.py) decides; False when a
    load-phase stage failed."""
    check.result.layers = outcome.layers
    if outcome.loaded is None:
        # Timed out or died while loading: nothing of metric.py ran to completion.
        _fill_output(row, outcome)
        row.run = outcome.run
        problems = [{"code": outcome.failure, "params": outcome.failure_params}]
        check.set_stage("load", "failed", outcome.failure, outcome.failure_params, problems)
        check.set_stage("signature", "skipped")
        check.set_stage("reward_spec", "skipped")
        return False
    if _failed_load_stage(outcome.loaded) is not None:
        _fill_output(row, outcome)
        row.run = outcome.run
        return False
    return True


def _stopped_in_run(outcome: ChildOutcome) -> bool:
    """The case ended during the artifact's run: no metric child loaded metric.py."""
    return outcome.loaded is None and outcome.phase == "run"


def handler_usage(handler: object) -> dict | None:
    """The handler's usage() of the case just run, if it counts any."""
    usage = getattr(handler, "usage", None)
    value = usage() if callable(usage) else None
    return value if isinstance(value, dict) else None


def _scored(check: _Check, row: CaseResult, case: Case) -> ScoredCase:
    """What the hints need of a valid row; its output is the artifact's run's, if any."""
    if row.run is not None:
        output = row.run.get("output_repr")
        if isinstance(output, str) and len(output) > EXAMPLE_LIMIT:
            output = output[: EXAMPLE_LIMIT - 1] + "…"
    else:
        output = shown(case.output)
    # What the reflection reads: the feedback, and each predictor's own (the hints say
    # "empty" only when all of them are).
    said = "\n".join(t for t in [row.feedback or "", *row.predictor_feedback.values()] if t)
    return ScoredCase(
        row.index,
        row.score,  # type: ignore[arg-type]
        said,
        check.bool_scores.get(row.index, False),
        expected_text=None if case.expected is None else shown(case.expected),
        output_text=output,
    )


def _task_model_failure(rows: Sequence[CaseResult], task_model: str) -> dict | None:
    """The call stage's params when every errored row is the task model's failure (an
    llm() call in the artifact's run that the model, not the check, failed), else None."""
    if not rows or any(
        row.problem != "run_model_error" or row.params.get("code") in CHECK_SIDE_MODEL_ERRORS
        for row in rows
    ):
        return None
    first = rows[0].params
    return {
        "model": task_model,
        "code": first.get("code"),
        "message": first.get("message", ""),
        "cases": [row.index for row in rows],
        "count": len(rows),
    }


def _conclude(
    check: _Check, has_reward_spec: bool, cases: Sequence[Case], task_model: str = ""
) -> CheckResult:
    result = check.result
    errored = [c.index for c in result.cases if c.status in ("error", "timeout")]
    invalid = [c.index for c in result.cases if c.status == "invalid"]
    valid = [c for c in result.cases if c.status == "valid"]
    scored = [_scored(check, c, cases[c.index]) for c in valid if c.score is not None]
    result.hints = compute_hints(scored, has_reward_spec=has_reward_spec)
    result.hints += feedback_notes(scored)
    result.hints += printed_hints(
        [
            (
                c.index,
                c.stdout_printed + c.stderr_printed,
                c.stdout_truncated + c.stderr_truncated,
            )
            for c in result.cases
        ]
    )
    cancelled = [c.index for c in result.cases if c.problem == "cancelled"]
    if cancelled:
        params = {"cases": cancelled, "count": len(cancelled)}
        check.set_stage("call", "failed", "cancelled", params)
        return check.fail("call")
    if errored:
        rows = [c for c in result.cases if c.index in errored]
        blamed = _task_model_failure(rows, task_model)
        if blamed is not None:
            check.set_stage("call", "failed", "task_model_error", blamed)
        else:
            params = {"cases": errored, "count": len(errored)}
            check.set_stage("call", "failed", "cases_failed", params)
        return check.fail("call")
    check.set_stage("call", "passed")
    if invalid:
        params = {"cases": invalid, "count": len(invalid)}
        check.set_stage("return_value", "failed", "cases_invalid", params)
        return check.fail("return_value")
    check.set_stage("return_value", "passed")
    result.passed, result.failed_stage = True, None
    check.progress()
    return result


def _name_candidates(load: StageResult, text: str) -> None:
    """A metric.py without score: name its functions that look like a DSPy metric or a
    gepa evaluator (read from the source here, never from what the child said)."""
    if load.problem != "no_score_function":
        return
    try:
        found = frameworks.candidates(ast_parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if not found:
        return
    load.params = {**load.params, "candidates": found}
    for problem in load.problems:
        if problem.get("code") == "no_score_function":
            problem["params"] = {**problem.get("params", {}), "candidates": found}


class _Stopped(Exception):
    """The first case to load showed a failed load stage: the others need not finish."""


class _Cases:
    """The check's cases as they end. They run at once and end in any order, but are
    taken in case order, so the result is the one running them one after the other gave:
    the first case that got as far as loading metric.py decides the load stages."""

    def __init__(self, check: _Check, with_artifact: bool, returns: Returns | None = None) -> None:
        self.check = check
        self.returns = returns
        self.with_artifact = with_artifact
        self.decided = False
        self.shown = False
        self.has_reward_spec = False
        self.last_layers: list[str] = []
        self.waiting: dict[int, tuple[ChildOutcome, object]] = {}
        self.next_index = 0

    def loaded(self, loaded: dict) -> None:
        """The first "loaded" report lights the load stages up at once."""
        if not self.shown:
            self.shown = True
            self.check.apply_loaded(loaded)

    def ended(self, index: int, outcome: ChildOutcome, handler) -> None:
        self.waiting[index] = (outcome, handler)
        while self.next_index in self.waiting:
            outcome, handler = self.waiting.pop(self.next_index)
            self._take(self.next_index, outcome, handler)
            self.next_index += 1

    def _take(self, index: int, outcome: ChildOutcome, handler) -> None:
        row = self.check.result.cases[index]
        self.last_layers = outcome.layers or self.last_layers
        row.usage = handler_usage(handler) if not self.with_artifact else outcome.metric_usage
        if not self.decided and not (self.with_artifact and _stopped_in_run(outcome)):
            self.decided = True
            if not _first_child(self.check, outcome, row):
                raise _Stopped
            self.has_reward_spec = bool(outcome.loaded and outcome.loaded.get("has_reward_spec"))
        self.check.bool_scores[index] = fill_case(row, outcome, self.returns)
        self.check.progress()


def run_check(
    source: bytes | str,
    cases: Sequence[Case] | None = None,
    **options,
) -> CheckResult:
    """Check metric.py `source` on `cases`: see _checked for the options."""
    result = _checked(source, cases, **options)
    if result.passed is False and not result.looks_like:
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        result.looks_like = looks_like(text, result.to_dict())
    return result


def _checked(
    source: bytes | str,
    cases: Sequence[Case] | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_progress: ProgressCallback | None = None,
    progress_every_s: float = 0.0,
    on_llm: LlmHandler | None = None,
    llm_for_case: Callable[[int], LlmHandler] | None = None,
    sandbox_config: sandbox.SandboxConfig | None = None,
    artifact: Artifact | None = None,
    task_llm_for_case: Callable[[int], LlmHandler] | None = None,
    task_model: str = "",
    sandboxes: SandboxSource | None = None,
    cancel: Cancel | None = None,
    files: dict[str, str] | None = None,
) -> CheckResult:
    """Check metric.py `source` on `cases` (default: the three built-in ones).

    A check that failed the way a DSPy or gepa metric fails also says what the file looks
    like and whether Convert would change it (`looks_like`, contract.looks_like).

    timeout_s limits loading and each score() call (1..600, else ValueError).
    on_progress gets a snapshot after every stage or case change; with
    progress_every_s > 0, only after a change at least that long after the
    start or the last one it got (the snapshot is then not made). on_llm
    answers skynet.llm() (default: error "no_metric_model"). llm_for_case, when
    given, wins over on_llm: it is called with each case's index for that case's
    handler, and a handler with a usage() method has its answer stored as the
    case's `usage`.

    artifact, when given, runs on each case's input first (its own timeout_s)
    and its return value is score()'s `output`; the case's given output and
    recorded observation are not used. task_llm_for_case(index) answers the
    run's llm() calls (default: error "no_task_model"); its usage() is the
    run's cost and tokens. Raises contract.artifacts.ArtifactError (a
    ValueError) for an artifact that cannot run. When every case that failed did
    so because the task model's call failed (unreachable, refused the key...), the
    call stage says so ("task_model_error", naming `task_model`, its id).

    cancel (contract.cancel.Cancel), when set from another thread, ends the cases still
    running as "cancelled" (their processes killed) and the check returns at once.

    files ({path: text}) are metric.py's helper modules (contract.files), importable
    beside it in each case's process; a set past the limits raises FilesRefused (a
    ValueError). A missing one is said at Load as "local_module_missing"
    (contract.local_modules), a missing library as before.
    """
    timeout = validate_timeout(timeout_s)
    text_of = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    helpers = helper_files.clean(files, metric_source=text_of)
    case_list = list(DEFAULT_CASES if cases is None else cases)
    if not case_list:
        raise ValueError("no_cases")
    artifact_job = artifact.to_job() if artifact is not None else None
    result = CheckResult(
        timeout_s=timeout,
        cases=[
            CaseResult(index=i, observation=c.measured() if artifact is None else unmeasured())
            for i, c in enumerate(case_list)
        ],
    )
    result.sandbox_mode = (sandbox_config or sandbox.SandboxConfig()).mode
    check = _Check(result, on_progress, progress_every_s)
    check.set_stage("load", "running")
    check.progress()

    checked = check_source(source)
    if checked.problem is not None:
        problems = [{"code": checked.problem, "params": checked.params}]
        check.set_stage("load", "failed", checked.problem, checked.params, problems)
        return check.fail("load")
    assert checked.text is not None and checked.tree is not None
    if missing_imports.missing(checked.tree, checked.text):
        # Names used but never imported: said at Load before anything runs, with what
        # the file looks like when it has no score (static_check says both).
        load = static_check(checked.text).stage("load")
        check.set_stage("load", "failed", load.problem, load.params, load.problems)
        return check.fail("load")

    state = _Cases(check, artifact_job is not None, Returns(checked.text, checked.tree))
    handlers = [
        (llm_for_case(index) if llm_for_case is not None else on_llm) or default_llm
        for index in range(len(case_list))
    ]
    task_handlers = None
    if artifact_job is not None and task_llm_for_case is not None:
        task_handlers = [task_llm_for_case(index) for index in range(len(case_list))]
    try:
        run_cases(
            checked.text,
            case_list,
            timeout_s=timeout,
            handlers=handlers,
            task_handlers=task_handlers,
            on_case=lambda index, outcome: state.ended(index, outcome, handlers[index]),
            on_loaded=state.loaded,
            sandboxes=sandboxes or OnDemand(sandbox_config),
            artifact=artifact_job,
            cancel=cancel,
            files=helpers,
        )
    except sandbox.SandboxUnavailable as exc:
        params = {"reason": exc.reason, "detail": exc.detail}
        problems = [{"code": "sandbox_unavailable", "params": params}]
        for stage_id in LOAD_STAGES:
            check.set_stage(stage_id, "skipped")
        check.set_stage("load", "failed", "sandbox_unavailable", params, problems)
        return check.fail("load")
    except _Stopped:
        failed = next(s.id for s in result.stages if s.status == "failed")
        _name_candidates(result.stage("load"), checked.text)
        return check.fail(failed)
    if not state.decided:
        # Every run failed before metric.py was loaded: nothing decides these stages.
        result.layers = result.layers or state.last_layers
        for stage_id in LOAD_STAGES:
            check.set_stage(stage_id, "skipped", params={"reason": "run_failed"})
    has_reward_spec = state.has_reward_spec
    return _conclude(check, has_reward_spec, case_list, task_model)
