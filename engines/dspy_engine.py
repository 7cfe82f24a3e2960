"""DSPy GEPA runs: `dspy.GEPA` over a stand-in of the user's DSPy program, with every
call of the program and of the metric in the sandbox.

The user's program is user code, so it never runs here. First one sandboxed case loads
it and describes its predictors (names, instructions, fields). Here a stand-in module
gets one `dspy.Predict` per predictor with the same name and signature; it is what
`dspy.GEPA` copies and rewrites. The stand-in's forward runs one case in the sandbox:
the real program with the stand-in's current instructions, its model calls going to the
task model over the case's socket, and then the user's score on what it returned, in a
process of its own (engines.adapter, as a GEPA run). The program's trace comes back as
data and is replayed onto the stand-in's predictors, which is what DSPy's GEPA builds
its reflective dataset from.

The metric handed to dspy.GEPA only looks up the verdict the case already has, per
prediction object, so the reflection-time call (with pred_name and pred_trace) reuses
it: the user's score runs once per case. That call's feedback is the predictor's own
when the side info's "predictor_feedback" names it, else the case's "feedback". A case
that failed scores 0 with its problem as the feedback and is counted per candidate, as
in a GEPA run. What stops the whole run (Cancel, no sandbox, a metric that stopped
loading, a provider that keeps failing) raises `Abort`, a BaseException, since dspy
turns every Exception of a program or a metric into a failure score and goes on.

The run's metric-call budget is taken a batch at a time, before any of the batch's cases
runs (calls.MetricCalls), by a dspy callback on the start of each dspy.Evaluate: every
batch dspy.GEPA scores is one, and the stand-in sees only one case at a time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future

from contract.artifacts import Artifact, ArtifactError
from contract.cancel import Cancel
from engines.adapter import CaseTrace, SandboxAdapter, candidate_digest
from engines.calls import CallsSpent, MetricCalls
from engines.engine import (
    LOG_FILE,
    Outcome,
    RunSpec,
    Stops,
    outcome_of_error,
    resuming,
    wire_up,
)
from engines.models import ReflectionModel
from engines.progress import Progress, Sink
from engines.sandboxes import HeldSandboxes, StartedOnOneThread
from skynet._dspy_program import TextEngine
from skynet.dspy_part import DESC_LIMIT, FIELD_LIMIT, NAME_LIMIT, PREDICTOR_LIMIT, TEXT_LIMIT

# The hidden input that tells the stand-in which case an example is.
CASE_KEY = "skynet_case"
# Cases of a batch in flight at once (dspy's threads), each on a sandbox pair of its own
# with dspy loaded: at most this many, and at most the run's window.
MAX_LANES = 4
VERDICTS_KEPT = 4096
DESCRIBE_METRIC = 'def score(input, output, expected):\n    return 0.0, {"feedback": "described"}\n'


class Abort(BaseException):
    """What stops the run, carried past dspy's handling of a program's exceptions."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def text_of(candidate: dict) -> str:
    """A candidate's instructions as one text: the predictor's, or each under its name."""
    if len(candidate) == 1:
        return str(next(iter(candidate.values())))
    return "\n\n".join(f"[{name}]\n{text}" for name, text in sorted(candidate.items()))


def readable(predictors: object) -> bool:
    """Whether a description from the sandbox is one the stand-in can be built from. It
    is data from user code's process, so it is checked rather than trusted."""
    if not isinstance(predictors, list) or not 0 < len(predictors) <= PREDICTOR_LIMIT:
        return False
    names = set()
    for described in predictors:
        if not isinstance(described, dict):
            return False
        name, instructions = described.get("name"), described.get("instructions")
        if not isinstance(name, str) or not 0 < len(name) <= NAME_LIMIT or name in names:
            return False
        names.add(name)
        if not isinstance(instructions, str) or len(instructions) > TEXT_LIMIT:
            return False
        fields = [*(described.get("inputs") or []), *(described.get("outputs") or [])]
        if not described.get("outputs") or len(fields) > FIELD_LIMIT:
            return False
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str):
                return False
            if not field["name"].isidentifier() or field["name"].startswith("_"):
                return False
            desc = field.get("desc", "")
            if not isinstance(desc, str) or len(desc) > DESC_LIMIT:
                return False
    return True


def _signature(dspy, described: dict):
    fields = {}
    for kind, maker in (("inputs", dspy.InputField), ("outputs", dspy.OutputField)):
        for field in described[kind]:
            options = {"desc": field["desc"]} if field.get("desc") else {}
            fields[field["name"]] = (str, maker(**options))
    return dspy.make_signature(fields, described["instructions"])


class Lanes:
    """The sandbox pairs a DSPy run's threads run cases on: one per thread at a time, each
    made when first needed (the run's sandbox starts dspy) and held to the run's end."""

    def __init__(self, sandboxes, run_sandboxes, size: int) -> None:
        self.sandboxes = sandboxes
        self.run_sandboxes = run_sandboxes
        self.size = max(1, size)
        self.free: queue.Queue[HeldSandboxes] = queue.Queue()
        self.made: list[HeldSandboxes] = []
        self._lock = threading.Lock()

    def take(self) -> HeldSandboxes:
        try:
            return self.free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self.made) < self.size:
                lane = HeldSandboxes(self.sandboxes, run_source=self.run_sandboxes)
                self.made.append(lane)
                return lane
        return self.free.get()

    def give(self, lane: HeldSandboxes) -> None:
        self.free.put(lane)

    def close(self, wait_s: float = 30.0) -> None:
        """Kill every lane's sandboxes, once the threads still on them gave them back
        (a stopped run's cases end within a moment of its Cancel)."""
        deadline = threading.Event()
        timer = threading.Timer(wait_s, deadline.set)
        timer.start()
        try:
            while self.free.qsize() < len(self.made) and not deadline.wait(0.05):
                pass
        finally:
            timer.cancel()
        for lane in self.made:
            lane.close()


class DspyCases:
    """Runs a case of the user's program with given instructions, and keeps its verdict.
    Called from dspy's threads: each case takes a lane, and a case asked for again while
    it runs (dspy re-runs a straggler) waits for the running one rather than run twice."""

    def __init__(
        self, adapter: SandboxAdapter, spec: RunSpec, items: list[dict], lanes: Lanes
    ) -> None:
        self.adapter = adapter
        self.spec = spec
        self.items = items
        self.lanes = lanes
        self.jobs: dict[str, dict] = {}
        self.verdicts: OrderedDict[int, tuple] = OrderedDict()
        self.running: dict[tuple, Future] = {}
        # The dspy.Evaluate whose cases are answered unrun (engine.resuming), if any.
        self.discarding: str | None = None
        self._lock = threading.Lock()

    def job(self, instructions: dict, *, describe: bool = False) -> dict:
        key = "describe" if describe else candidate_digest(text_of(instructions))
        with self._lock:
            found = self.jobs.get(key)
        if found is None:
            artifact = Artifact.dspy(
                self.spec.program_source,
                instructions=instructions,
                output_fields=self.spec.output_fields,
                describe=describe,
            )
            found = artifact.to_job()
            with self._lock:
                self.jobs[key] = found
        return found

    def _on_lane(self, batch: list[dict], job: dict, digest: str, **options):
        lane = self.lanes.take()
        try:
            return self.adapter.run_job(batch, job, digest, sandboxes=lane, **options)
        finally:
            self.lanes.give(lane)

    def describe(self):
        """(the predictors, None) or (None, the trace of the case saying why not)."""
        job = self.job({}, describe=True)
        (trace,) = self._on_lane([self.items[0]], job, "describe", source=DESCRIBE_METRIC)
        predictors = (trace.dspy or {}).get("predictors")
        if trace.status == "valid" and readable(predictors):
            return predictors, None
        if trace.status == "valid":  # loaded, but what it said of itself cannot be used
            trace.problem, trace.params = "no_predictors", {}
        return None, trace

    def run(self, index: int, instructions: dict):
        if self.discarding is not None:
            return CaseTrace(self.items[index]["input"], "", "", 0.0, "skipped")
        digest = candidate_digest(text_of(instructions))
        key = (index, digest)
        with self._lock:
            running = self.running.get(key)
            mine = running is None
            if mine:
                running = self.running[key] = Future()
        if not mine:
            return running.result()
        try:
            (trace,) = self._on_lane([self.items[index]], self.job(instructions), digest)
        except Exception as exc:  # what stops the run: past dspy, to run_dspy_gepa
            abort = Abort(exc)
            running.set_exception(abort)
            raise abort from None
        else:
            running.set_result(trace)
            return trace
        finally:
            with self._lock:
                self.running.pop(key, None)

    def remember(self, prediction, trace: CaseTrace) -> None:
        """Keep the case's verdict for dspy's metric calls on `prediction`: its score,
        feedback, named scores and each predictor's own feedback only. The prediction is
        held weakly and the case's program trace not at all, so what dspy lets go of (a
        batch's predictions and the traces replayed from them) is freed, not kept by the
        last VERDICTS_KEPT cases."""
        verdict = (
            weakref.ref(prediction),
            trace.score,
            trace.feedback,
            dict(trace.scores),
            dict(trace.predictor_feedback),
        )
        with self._lock:
            self.verdicts[id(prediction)] = verdict
            while len(self.verdicts) > VERDICTS_KEPT:
                self.verdicts.popitem(last=False)

    def metric(self, gold, pred, trace=None, pred_name=None, pred_trace=None):
        import dspy

        with self._lock:
            found = self.verdicts.get(id(pred))
        if found is None or found[0]() is not pred:
            return dspy.Prediction(score=0.0, feedback="This case was not scored.")
        _, score, feedback, scores, per_predictor = found
        # GEPA's reflection-time call names the predictor it improves: its own feedback,
        # when the metric gave it one, else the case's.
        if isinstance(pred_name, str) and per_predictor.get(pred_name):
            feedback = per_predictor[pred_name]
        return dspy.Prediction(
            score=score, feedback=feedback or None, objective_scores=dict(scores)
        )


def _stand_in(dspy, cases: DspyCases, predictors: list[dict]):
    """The module dspy.GEPA optimizes: the user's predictors by name, run in the sandbox."""

    class Program(dspy.Module):
        # A class attribute, so dspy's deepcopy of the module shares it.
        runner = cases

        def __init__(self) -> None:
            super().__init__()
            self.steps = {d["name"]: dspy.Predict(_signature(dspy, d)) for d in predictors}

        def named_predictors(self):
            return list(self.steps.items())

        def predictors(self):
            return list(self.steps.values())

        def forward(self, **inputs):
            index = inputs.pop(CASE_KEY)
            instructions = {name: p.signature.instructions for name, p in self.steps.items()}
            case = self.runner.run(index, instructions)
            ran = case.dspy or {}
            prediction = dspy.Prediction(**(ran.get("fields") or {}))
            self.runner.remember(prediction, case)
            trace = dspy.settings.trace
            if trace is not None:
                for step in ran.get("trace") or []:
                    predictor = self.steps.get(step.get("predictor"))
                    if predictor is not None:
                        outputs = dspy.Prediction(**(step.get("outputs") or {}))
                        trace.append((predictor, dict(step.get("inputs") or {}), outputs))
            return prediction

    return Program()


def _gate(calls: MetricCalls, cases: DspyCases, *, resume: bool):
    """The dspy callback that takes each batch's metric calls from the budget as its
    dspy.Evaluate starts, or stops the run there. (dspy's DspyAdapter scores every batch,
    a minibatch, the validation cases or a merge's, with one dspy.Evaluate.) A resumed
    run's first batch, the seed's validation cases, is answered unrun (engine.resuming)."""
    from dspy.utils.callback import BaseCallback

    class Gate(BaseCallback):
        discard_next = resume

        def on_evaluate_start(self, call_id, instance, inputs) -> None:
            if self.discard_next:
                self.discard_next = False
                cases.discarding = call_id
                return
            batch = inputs.get("devset") or getattr(instance, "devset", None) or []
            try:
                calls.take(len(batch))
            except CallsSpent as spent:
                # A BaseException: dspy logs an Exception a callback raises and goes on.
                raise Abort(spent) from None

        def on_evaluate_end(self, call_id, outputs, exception=None) -> None:
            if cases.discarding == call_id:
                cases.discarding = None

    return Gate()


def _example(dspy, item: dict, index: int):
    inputs = dict(item["input"]) if isinstance(item["input"], dict) else {"input": item["input"]}
    return dspy.Example(**inputs, **{CASE_KEY: index}).with_inputs(*inputs, CASE_KEY)


def run_dspy_gepa(
    spec: RunSpec,
    *,
    sandboxes,
    run_sandboxes,
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
    """Optimize the DSPy program of spec until a stop; (how it ended, its progress).
    `run_sandboxes` gives the sandboxes the program runs in (with dspy loaded)."""
    cancel = cancel or Cancel()
    # The cases' own stop: the user's Cancel, or a case that stopped the whole run.
    stop = Cancel()
    cancel.on_set(stop.set)
    calls = MetricCalls(spec.max_metric_calls, spec.metric_calls_before)
    starters = [StartedOnOneThread(sandboxes), StartedOnOneThread(run_sandboxes)]
    lanes = Lanes(*starters, min(spec.window, MAX_LANES))
    adapter, progress = wire_up(
        spec,
        sink,
        reflection=reflection,
        budget=budget,
        calls=calls,
        every_s=every_s,
        text_of=text_of,
        kind="dspy",
        seed_text="",
        sandboxes=None,
        metric_for=metric_for,
        task_for=task_for,
        forget=forget,
        watch=watch,
        cancel=stop,
    )
    stops = Stops.of(spec, cancel=cancel, budget=budget, watch=watch, calls=calls)
    os.makedirs(spec.run_dir, exist_ok=True)
    try:
        ended = _compile(spec, adapter, lanes, progress, reflection, stops, calls)
        return ended, progress
    finally:
        lanes.close()
        for starter in starters:
            starter.close()


@contextlib.contextmanager
def _run_log(run_dir: str):
    """dspy's log lines (its proposed instructions, each evaluation's score) go to the run
    folder's run_log.txt while the run compiles, as gepa's do in a GEPA run, rather than
    into the worker's log."""
    logger = logging.getLogger("dspy")
    handler = logging.FileHandler(os.path.join(run_dir, LOG_FILE), encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    kept, propagate = list(logger.handlers), logger.propagate
    for old in kept:
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        handler.close()
        for old in kept:
            logger.addHandler(old)
        logger.propagate = propagate


def _compile(spec, adapter, lanes, progress, reflection, stops: Stops, calls) -> Outcome:
    import dspy

    # Nothing of one run's model calls is kept for another (its LMs are cache=False too).
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

    items = [*spec.trainset, *spec.valset]
    cases = DspyCases(adapter, spec, items, lanes)
    try:
        try:
            predictors, failed = cases.describe()
        except ArtifactError as exc:
            return Outcome("failed", "program_failed", {"problem": exc.code, "params": exc.params})
        if predictors is None:
            if failed.problem == "dspy_unavailable":
                detail = f"{failed.params.get('type', '')}: {failed.params.get('message', '')}"
                params = {"reason": "dspy_unavailable", "detail": detail.strip(": ")}
                return Outcome("paused", "sandbox_unavailable", params)
            params = {"problem": failed.problem or failed.status, "params": failed.params}
            return Outcome("failed", "program_failed", params)
        student = _stand_in(dspy, cases, predictors)
        train = [_example(dspy, item, i) for i, item in enumerate(spec.trainset)]
        offset = len(spec.trainset)
        val = [_example(dspy, item, offset + i) for i, item in enumerate(spec.valset)]
        reflection_lm = dspy.LM(
            "skynet/reflection", engine=TextEngine(reflection), cache=False, num_retries=0
        )
        optimizer = dspy.GEPA(
            metric=cases.metric,
            reflection_lm=reflection_lm,
            max_metric_calls=spec.max_metric_calls,
            reflection_minibatch_size=spec.minibatch_size,
            track_stats=True,
            num_threads=lanes.size,
            log_dir=spec.run_dir,
            seed=spec.seed,
            warn_on_score_mismatch=False,
            gepa_kwargs={
                "stop_callbacks": stops.callbacks,
                "callbacks": [progress],
                "cache_evaluation": False,
            },
        )
        gate = _gate(calls, cases, resume=resuming(spec.run_dir))
        with _run_log(spec.run_dir), dspy.context(lm=None, trace=None, callbacks=[gate]):
            optimized = optimizer.compile(student, trainset=train, valset=val)
    except Abort as abort:
        # The cases still in flight on dspy's other threads: stop them, keep nothing.
        adapter.cancel.set()
        progress.flush(force=True)
        return outcome_of_error(abort.error)
    except Exception as exc:
        ended = outcome_of_error(exc, known_only=True)
        if ended is None:
            raise
        progress.flush(force=True)
        return ended
    progress.flush(force=True)
    results = getattr(optimized, "detailed_results", None)
    ended = stops.outcome()
    if results is not None:
        ended.params = {**ended.params, "best_idx": int(results.best_idx)}
    return ended
