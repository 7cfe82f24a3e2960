"""gepa's GEPAAdapter over the contract's case processes.

`evaluate(batch, candidate)` runs, for each case, the candidate (a prompt template, or
the artifact text a Python program's run(artifact, input) receives) and then the user's
`score`, in the warm sandboxes, the run and the metric each in a process of its own, as
the contract check does (contract.evaluation). A case that fails scores 0 with its
problem as its feedback; it never raises. A template the reflection model broke (its
syntax, or a field of the seed it dropped) scores 0 on every case with that problem,
without starting a process.

`make_reflective_dataset` gives the reflection model each case's inputs, the output the
candidate generated and the metric's feedback, and nothing else: never the metric's
source, never the expected values, and of a metric that failed only the kind of failure
(its messages could quote the expected values). A template or an artifact text is one
component, so it reads the general "feedback" only; the side info's "predictor_feedback"
is kept on the trace for DSPy GEPA (engines.dspy_engine), which asks per predictor.

What stops the whole run raises instead: Cancel (RunStopped), no sandbox
(SandboxFailed), a metric that no longer loads (MetricFailed), a provider that keeps
failing (models.ProviderFailed), a batch that would pass the run's metric-call budget
(calls.CallsSpent, before any of its cases runs).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from contract.artifacts import Artifact, ArtifactError
from contract.cancel import Cancel
from contract.cases import Case
from contract.evaluation import Scored, evaluate
from contract.runner import SandboxSource
from contract.storable import storable_text
from engines.calls import MetricCalls
from engines.models import ProviderWatch
from providers.budget import Usage
from skynet import template

COMPONENT = "artifact"
OUTPUT_LIMIT = 2000
FEEDBACK_LIMIT = 4000


class RunStopped(Exception):
    """The user cancelled the run."""


class SandboxFailed(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


class MetricFailed(Exception):
    """metric.py stopped loading (it loaded for the contract check)."""

    def __init__(self, params: dict) -> None:
        super().__init__(params)
        self.params = params


@dataclass
class CaseTrace:
    """What the reflection model may read of one case, and what the run page shows."""

    input: dict
    output: str
    feedback: str
    score: float
    status: str
    problem: str = ""
    # A DSPy program's run: its prediction's fields and its predictors' trace.
    dspy: dict | None = None
    scores: dict = field(default_factory=dict)
    # The parameters of the run's problem, when the run failed.
    params: dict = field(default_factory=dict)
    # Each DSPy predictor's own feedback, by its name (the side info's
    # "predictor_feedback"), of a case that scored; cut and storable as `feedback` is.
    predictor_feedback: dict = field(default_factory=dict)


@dataclass
class Spend:
    """Model use of the candidates' runs (task) and of the metric, over the whole run."""

    task: Usage = field(default_factory=Usage)
    metric: Usage = field(default_factory=Usage)


def candidate_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _add(total: Usage, used: dict | None) -> None:
    if not used:
        return
    total.model_calls += int(used.get("model_calls") or 0)
    total.input_tokens += int(used.get("input_tokens") or 0)
    total.output_tokens += int(used.get("output_tokens") or 0)
    total.cost_usd += float(used.get("cost_usd") or 0.0)
    total.model_ms += float(used.get("model_ms") or 0.0)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_problem(row, run: dict | None) -> str:
    """The feedback of a case that did not score, in words the reflection model can act
    on. A failure of the candidate's run says what failed; a failure of the metric says
    only its kind, since its messages may quote the expected values."""
    problem = row.problem or row.status
    if (
        run is not None
        and run.get("problem")
        and row.status == "error"
        and row.problem == run.get("problem")
    ):
        params = run.get("params") or {}
        if problem == "run_model_error":
            return f"The task model call failed ({params.get('code', '')}): {params.get('message', '')}"
        if problem.startswith("template_"):
            field_name = params.get("field")
            where = f" (field {{{field_name}}})" if field_name else ""
            return f"The prompt template cannot be filled{where}: {problem}."
        message = params.get("message") or ""
        kind = params.get("type") or problem
        return f"The program failed on this input: {kind}: {message}".strip()
    if row.status == "timeout":
        return "This case ran past its time limit."
    if row.status == "invalid":
        return f"The metric could not score this output: its return value broke the contract ({problem})."
    kind = (row.exception or {}).get("type") or problem
    return f"The metric failed on this output ({kind})."


class SandboxAdapter:
    """The GEPAAdapter of a run; one per run, used from gepa's thread only."""

    # gepa's default proposer (its reflection prompt, through the reflection model).
    propose_new_texts = None

    def __init__(
        self,
        *,
        source: str,
        kind: str,
        program_source: str,
        seed_text: str,
        sandboxes: SandboxSource,
        timeout_s: float,
        metric_for: Callable[[int], Callable] | None,
        task_for: Callable[[int], Callable] | None,
        forget: Callable[[int], None] | None = None,
        watch: ProviderWatch | None = None,
        window: int = 6,
        cancel: Cancel | None = None,
        calls: MetricCalls | None = None,
        files: dict[str, str] | None = None,
    ) -> None:
        self.source = source
        # The metric's helper modules; not for the DSPy engine's own describing metric.
        self.files = files or None
        self.kind = kind
        self.program_source = program_source
        self.seed_fields = self._fields(seed_text) if kind == "prompt" else set()
        self.sandboxes = sandboxes
        self.timeout_s = timeout_s
        self.metric_for = metric_for
        self.task_for = task_for
        self.forget = forget
        self.watch = watch or ProviderWatch()
        self.window = window
        self.cancel = cancel or Cancel()
        # The run's metric-call budget, taken a batch at a time by evaluate().
        self.calls = calls
        # The next batch's scores will not be used (engine.resuming): answer it unrun.
        self.discard_next = False
        self.spend = Spend()
        self.cases_run = 0
        # Per candidate (its digest): how many cases ended with each problem.
        self.problems: dict[str, dict[str, int]] = {}
        self.sandbox_ms = 0.0
        self._lock = threading.Lock()

    @staticmethod
    def _fields(text: str) -> set[str]:
        try:
            return set(template.fields(text))
        except template.TemplateError:
            return set()

    def _job(self, text: str) -> tuple[dict | None, str]:
        """The candidate's artifact job, or (None, the problem that stops every case)."""
        if self.kind == "prompt":
            try:
                fields = set(template.fields(text))
            except template.TemplateError as exc:
                return (
                    None,
                    f"The prompt template is not valid ({exc.code}): {exc.params.get('msg') or exc.params.get('field') or ''}".strip(),
                )
            lost = sorted(self.seed_fields - fields)
            if lost:
                names = ", ".join("{" + name + "}" for name in lost)
                return (
                    None,
                    f"The prompt template lost the placeholder(s) {names}: every input field must stay in it.",
                )
            artifact = Artifact.prompt(text)
        else:
            artifact = Artifact.python(self.program_source, text)
        try:
            return artifact.to_job(), ""
        except ArtifactError as exc:
            return None, f"The candidate cannot run ({exc.code})."

    def evaluate(self, batch: list[dict], candidate: dict[str, str], capture_traces: bool = False):
        from gepa.core.adapter import EvaluationBatch

        if self.cancel.is_set():
            raise RunStopped()
        if self.watch.failed is not None:
            raise self.watch.failed
        if self.discard_next:
            self.discard_next = False
            return EvaluationBatch(outputs=[""] * len(batch), scores=[0.0] * len(batch))
        # gepa counts every case of a batch as a metric call, a broken template's too.
        if self.calls is not None:
            self.calls.take(len(batch))
        text = candidate[COMPONENT]
        digest = candidate_digest(text)
        job, broken = self._job(text)
        traces: list[CaseTrace | None] = [None] * len(batch)
        objective: list[dict[str, float]] = [{} for _ in batch]
        if job is None:
            for i, item in enumerate(batch):
                traces[i] = CaseTrace(item["input"], "", broken, 0.0, "error", "candidate_broken")
            self._count(digest, {"candidate_broken": len(batch)})
        else:
            self._run(batch, job, traces, objective, digest)
        done = [t for t in traces if t is not None]
        scores = [t.score for t in done]
        outputs = [t.output for t in done]
        named = objective if any(objective) else None
        return EvaluationBatch(
            outputs=outputs,
            scores=scores,
            trajectories=done if capture_traces else None,
            objective_scores=named,
        )

    def _run(self, batch, job, traces, objective, digest, source=None, sandboxes=None) -> None:
        # DSPy GEPA runs cases from several threads, each on sandboxes of its own.
        with self._lock:
            base = self.cases_run
            self.cases_run += len(batch)
        counts: dict[str, int] = {}

        def scored(s: Scored) -> None:
            row = s.row
            run = row.run or {}
            with self._lock:
                _add(self.spend.task, run.get("usage"))
                _add(self.spend.metric, row.usage)
                self.sandbox_ms += s.total_ms
            if self.forget is not None:
                self.forget(base + s.index)
            output = _clip(str(run.get("output_repr") or ""), OUTPUT_LIMIT)
            if row.status == "valid" and row.score is not None:
                score = float(row.score)
                feedback = row.feedback if row.feedback is not None else ""
                per_predictor = {
                    storable_text(name): storable_text(_clip(text, FEEDBACK_LIMIT))
                    for name, text in (row.predictor_feedback or {}).items()
                }
                problem = ""
                objective[s.index] = {
                    k: float(v) for k, v in (row.scores or {}).items() if isinstance(v, int | float)
                }
            else:
                score = 0.0
                feedback = describe_problem(row, run or None)
                per_predictor = {}
                problem = row.problem or row.status
                counts[problem] = counts.get(problem, 0) + 1
            traces[s.index] = CaseTrace(
                batch[s.index]["input"],
                output,
                # Made storable (contract.storable): gepa hands it to the reflection
                # model, whose request cannot encode a lone surrogate, and may keep it.
                storable_text(_clip(feedback, FEEDBACK_LIMIT)),
                score,
                row.status,
                problem,
                run.get("dspy") if run else None,
                params=dict(run.get("params") or {}) if run and run.get("problem") else {},
                predictor_feedback=per_predictor,
            )

        cases = (
            Case(input=item["input"], output=None, expected=item.get("expected")) for item in batch
        )
        metric_for = (
            (lambda i: self.watch.wrap("metric", self.metric_for(base + i)))
            if self.metric_for
            else None
        )
        task_for = (
            (lambda i: self.watch.wrap("task", self.task_for(base + i))) if self.task_for else None
        )
        ended = evaluate(
            source or self.source,
            cases,
            files=None if source else self.files,
            on_scored=scored,
            sandboxes=sandboxes or self.sandboxes,
            timeout_s=self.timeout_s,
            handler_for=metric_for,
            task_handler_for=task_for,
            artifact=job,
            window=self.window,
            cancel=self.cancel,
        )
        if counts:
            self._count(digest, counts)
        if ended.stopped == "cancelled" or self.cancel.is_set():
            raise RunStopped()
        if ended.stopped in ("sandbox_unavailable", "sandbox_failed"):
            raise SandboxFailed(
                ended.params.get("reason", ended.stopped), ended.params.get("detail", "")
            )
        if ended.stopped == "load_failed":
            raise MetricFailed(ended.params)
        if self.watch.failed is not None:
            raise self.watch.failed
        for i, trace in enumerate(traces):
            if trace is None:  # never reported (cannot happen when nothing stopped)
                traces[i] = CaseTrace(
                    batch[i]["input"], "", "This case did not run.", 0.0, "error", "not_run"
                )

    def run_job(
        self,
        batch: list[dict],
        job: dict,
        digest: str,
        *,
        source: str | None = None,
        sandboxes: SandboxSource | None = None,
    ) -> list[CaseTrace]:
        """Each case of `batch` run with the artifact `job` and scored (by `source`, else
        the run's metric; on `sandboxes`, else the run's); raises what stops the whole
        run, as evaluate() does. Safe to call from several threads with their own
        `sandboxes`."""
        if self.cancel.is_set():
            raise RunStopped()
        if self.watch.failed is not None:
            raise self.watch.failed
        traces: list[CaseTrace | None] = [None] * len(batch)
        objective: list[dict[str, float]] = [{} for _ in batch]
        self._run(batch, job, traces, objective, digest, source, sandboxes)
        for trace, named in zip(traces, objective, strict=True):
            trace.scores = named  # type: ignore[union-attr]
        return traces  # type: ignore[return-value]

    def _count(self, digest: str, counts: dict[str, int]) -> None:
        with self._lock:
            mine = self.problems.setdefault(digest, {})
            for problem, n in counts.items():
                mine[problem] = mine.get(problem, 0) + n

    def make_reflective_dataset(self, candidate, eval_batch, components_to_update):
        records = []
        for trace in eval_batch.trajectories or []:
            records.append(
                {
                    "Inputs": trace.input,
                    "Generated Outputs": trace.output,
                    "Feedback": trace.feedback or f"Score: {trace.score:g}",
                }
            )
        return {name: records for name in components_to_update}
