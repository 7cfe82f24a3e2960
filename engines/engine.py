"""One GEPA run through gepa's core API (`gepa.optimize`), never optimize_anything's
defaults (which would pick a model and a litellm client of their own).

The candidate has one component, "artifact": a prompt template, or the artifact text a
Python program's run(artifact, input) receives. The seed is the submitted one. gepa's
`run_dir` holds its checkpoint (`gepa_state.bin`, saved before every iteration): called
again with the same run_dir, gepa resumes from it. `cache_evaluation` stays off and
`raise_on_exception` on: in gepa 0.1.4 the cache mixes up objective scores and a
swallowed exception would score the candidate as if nothing happened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from contract.cancel import Cancel
from engines.adapter import COMPONENT, MetricFailed, RunStopped, SandboxAdapter, SandboxFailed
from engines.calls import CallsSpent, MetricCalls
from engines.models import BudgetReached, ProviderFailed, ReflectionModel
from engines.progress import Progress, Sink
from engines.sandboxes import HeldSandboxes
from engines.stoppers import (
    CallsStopper,
    CancelStopper,
    PerfectStopper,
    SpendStopper,
    WatchStopper,
)

STOP_FILE = "gepa.stop"
LOG_FILE = "run_log.txt"
STATE_FILE = "gepa_state.bin"


def resuming(run_dir: str) -> bool:
    """Whether gepa will resume from a checkpoint in run_dir (its own test). It then
    scores the seed on the validation cases once more before it loads the checkpoint,
    and keeps the checkpoint's scores: the engines answer that batch without running it,
    so that a resumed run spends none of its budget on it."""
    return os.path.exists(os.path.join(run_dir, STATE_FILE))


class RunLog:
    """gepa's logger: its lines go to the run directory's run_log.txt, and nowhere else.
    (gepa's own Logger swaps sys.stdout for the whole process while it runs, which a
    worker's other threads would write through.)"""

    def __init__(self, path: str) -> None:
        self.path = path

    def log(self, *parts: object, **_: object) -> None:
        with open(self.path, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(" ".join(str(part) for part in parts) + "\n")


@dataclass
class Outcome:
    """How the run ended. `ended`: "finished" (a budget or a stop reached: `reason` is
    "metric_calls", "usd_budget", "stop_file", "perfect_score"), "cancelled", "paused" (resumable:
    `reason` "provider_failed" or "sandbox_unavailable") or "failed" ("metric_failed").
    A run that stopped short of its metric calls (its next step needed more than was
    left) has `params` {"needed": the calls that step needed}."""

    ended: str
    reason: str
    params: dict = field(default_factory=dict)


@dataclass
class RunSpec:
    """What one run optimizes, and with what."""

    source: str
    kind: str  # "prompt" | "python" | "dspy"
    seed_text: str
    trainset: list[dict]
    valset: list[dict]
    max_metric_calls: int
    run_dir: str
    program_source: str = ""
    timeout_s: float = 10.0
    window: int = 6
    minibatch_size: int = 3
    seed: int = 0
    # A DSPy program's: the dataset's output columns (what its metric gets as output).
    output_fields: tuple[str, ...] = ()
    # The metric calls the run's earlier attempts made: a resumed run's budget counts them.
    metric_calls_before: int = 0
    # The metric's helper modules beside metric.py ({path: text}), importable in its sandbox.
    files: dict[str, str] | None = None


def spend_reader(adapter: SandboxAdapter, reflection: ReflectionModel, budget):
    """What the run spent so far, per model and in all, as the progress records it."""

    def spend() -> dict:
        return {
            "task_usd": adapter.spend.task.cost_usd,
            "metric_usd": adapter.spend.metric.cost_usd,
            "reflection_usd": reflection.total_cost,
            "task_calls": adapter.spend.task.model_calls,
            "metric_calls": adapter.spend.metric.model_calls,
            "reflection_calls": reflection.usage.model_calls,
            "total_usd": budget.usd,
            "max_usd": budget.limits.max_usd,
        }

    return spend


def run_gepa(
    spec: RunSpec,
    *,
    sandboxes,
    budget,
    reflection: ReflectionModel,
    watch,
    sink: Sink,
    metric_for=None,
    task_for=None,
    forget=None,
    cancel: Cancel | None = None,
    every_s: float = 1.0,
) -> tuple[Outcome, Progress]:
    """Optimize spec's seed until a stop; (how it ended, the progress it recorded)."""

    cancel = cancel or Cancel()
    held = HeldSandboxes(sandboxes)
    calls = MetricCalls(spec.max_metric_calls, spec.metric_calls_before)
    adapter, progress = wire_up(
        spec,
        sink,
        reflection=reflection,
        budget=budget,
        calls=calls,
        every_s=every_s,
        kind=spec.kind,
        seed_text=spec.seed_text,
        sandboxes=held,
        metric_for=metric_for,
        task_for=task_for,
        forget=forget,
        watch=watch,
        cancel=cancel,
        adapter_calls=calls,
    )
    stops = Stops.of(spec, cancel=cancel, budget=budget, watch=watch, calls=calls)
    os.makedirs(spec.run_dir, exist_ok=True)
    try:
        return _optimize(spec, adapter, progress, reflection, stops)
    finally:
        held.close()


def wire_up(
    spec: RunSpec,
    sink: Sink,
    *,
    reflection: ReflectionModel,
    budget,
    calls: MetricCalls,
    every_s: float,
    text_of=None,
    adapter_calls: MetricCalls | None = None,
    **adapter_args,
) -> tuple[SandboxAdapter, Progress]:
    """The adapter that runs each case in the sandbox, and the progress that records the
    run from it, as both engines wire them: the adapter takes `adapter_args` (the kind,
    the seed, its sandboxes, the models' handlers, the watch, the cancel) and, where it
    counts them itself, `adapter_calls`; the progress reads what the three models spent."""
    adapter = SandboxAdapter(
        source=spec.source,
        files=spec.files,
        program_source=spec.program_source,
        timeout_s=spec.timeout_s,
        window=spec.window,
        calls=adapter_calls,
        **adapter_args,
    )
    progress = Progress(
        sink,
        adapter,
        spend=spend_reader(adapter, reflection, budget),
        max_metric_calls=spec.max_metric_calls,
        every_s=every_s,
        text_of=text_of,
        calls=calls,
    )
    return adapter, progress


@dataclass
class Stops:
    """The run's stops besides gepa's own, in the order gepa asks them (its
    stop_callbacks), and which one ended the run."""

    spec: RunSpec
    watch: object  # models.ProviderWatch
    cancel: CancelStopper
    spend: SpendStopper
    provider: WatchStopper
    perfect: PerfectStopper
    calls: CallsStopper

    @classmethod
    def of(cls, spec: RunSpec, *, cancel: Cancel, budget, watch, calls: MetricCalls) -> Stops:
        return cls(
            spec=spec,
            watch=watch,
            cancel=CancelStopper(cancel),
            spend=SpendStopper(budget, watch),
            provider=WatchStopper(watch),
            perfect=PerfectStopper(),
            calls=CallsStopper(calls, spec.minibatch_size),
        )

    @property
    def callbacks(self) -> list:
        return [self.cancel, self.spend, self.provider, self.perfect, self.calls]

    def outcome(self) -> Outcome:
        """How a run that gepa ended on its own ended: which stop fired."""
        if self.cancel.fired:
            return Outcome("cancelled", "cancelled")
        if self.watch.failed is not None:
            failed = self.watch.failed
            params = {"role": failed.role, "code": failed.code, "message": failed.message}
            return Outcome("paused", "provider_failed", params)
        if self.spend.fired:
            return Outcome("finished", "usd_budget")
        if os.path.exists(os.path.join(self.spec.run_dir, STOP_FILE)):
            return Outcome("finished", "stop_file")
        if self.perfect.fired:
            return Outcome("finished", "perfect_score")
        if self.calls.fired and self.calls.calls.left:
            return Outcome("finished", "metric_calls", {"needed": self.calls.needed})
        return Outcome("finished", "metric_calls")


def _optimize(spec, adapter, progress, reflection, stops: Stops) -> tuple[Outcome, Progress]:
    import gepa

    adapter.discard_next = resuming(spec.run_dir)

    try:
        gepa.optimize(
            seed_candidate={COMPONENT: spec.seed_text},
            trainset=spec.trainset,
            valset=spec.valset,
            adapter=adapter,
            reflection_lm=reflection,
            max_metric_calls=spec.max_metric_calls,
            stop_callbacks=stops.callbacks,
            reflection_minibatch_size=spec.minibatch_size,
            run_dir=spec.run_dir,
            logger=RunLog(os.path.join(spec.run_dir, LOG_FILE)),
            callbacks=[progress],
            track_best_outputs=False,
            display_progress_bar=False,
            cache_evaluation=False,
            raise_on_exception=True,
            seed=spec.seed,
        )
    except Exception as exc:
        ended = outcome_of_error(exc, known_only=True)
        if ended is None:
            raise
        progress.flush(force=True)
        return ended, progress
    progress.flush(force=True)
    return stops.outcome(), progress


def outcome_of_error(exc: Exception, *, known_only: bool = False) -> Outcome | None:
    """How a run ends on what stopped it; None (with `known_only`) for anything else."""
    if isinstance(exc, RunStopped):
        return Outcome("cancelled", "cancelled")
    if isinstance(exc, BudgetReached):
        return Outcome("finished", "usd_budget", {"message": exc.message})
    if isinstance(exc, ProviderFailed):
        params = {"role": exc.role, "code": exc.code, "message": exc.message}
        return Outcome("paused", "provider_failed", params)
    if isinstance(exc, SandboxFailed):
        return Outcome(
            "paused", "sandbox_unavailable", {"reason": exc.reason, "detail": exc.detail}
        )
    if isinstance(exc, MetricFailed):
        return Outcome("failed", "metric_failed", exc.params)
    if isinstance(exc, CallsSpent):
        return Outcome("finished", "metric_calls", {"needed": exc.needed})
    if known_only:
        return None
    raise exc
