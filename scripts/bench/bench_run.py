#!/usr/bin/env python3
"""Optimization runs: a GEPA run's cost per metric call against the warm sandbox's bare
per-call time, and where a run's time goes, in one run of this script.

    .venv/bin/python scripts/bench/bench_run.py [--calls 200] [--engine gepa|dspy] [--latency-ms 0]

The models are instant fakes on 127.0.0.1 (tests.quiz's task and reflection models behind
tests.providers.fakes.FakeProvider, over real HTTP), so what is measured is the
workbench's own cost; the metric is quiz.CAPPED, which no candidate scores perfectly on,
so the run goes on to its budget. Everything runs on a private stack (scripts/bench/bench_stack.py:
embedded Redis, a fresh SQLite database, one Celery worker). Printed as ratios against a
baseline measured in the same run:
- bare: the same prompt and metric over as many cases as the run makes, through warm
  sandboxes in this process (contract.evaluation.evaluate, window as a run's), no gepa,
  no database, no broker;
- end to end: a --calls run submitted to the runs worker (row created, task sent) to the
  row "finished", per case the run made;
- where the time goes: the same run again in this process with each part timed: the
  sandbox (the case processes, model calls taken out), the models (task, metric and
  reflection calls as the gateways timed them), the database (the progress writes) and
  gepa (the rest: its loop, its state saves, its proposals' bookkeeping).

With --engine dspy the run is DSPy GEPA's, of tests.quiz's DSPy program (one
dspy.Predict): the bare baseline runs that program (in a warm sandbox with dspy loaded)
and the metric over as many cases, one case at a time as DSPy GEPA runs them, and "gepa"
in the breakdown is dspy's and gepa's loop together. --latency-ms makes every model call
take that long (the fake provider waits before it answers), to see what running a batch's
cases at once buys when the models, not the workbench, take the time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stack import ROOT, Stack

sys.path.insert(0, str(ROOT))


class KeptWarm:
    """A sandbox source that keeps what it is given back, as the worker's pool does."""

    def __init__(self, config, preload=None) -> None:
        self.config = config
        self.preload = preload
        self.idle = []

    def take(self):
        from contract.warm import WarmSandbox

        while self.idle:
            warm = self.idle.pop()
            if warm.alive:  # one started by a thread that has ended is gone with it
                return warm
            warm.close()
        return WarmSandbox.start(self.config, preload=self.preload)

    def release(self, warm) -> None:
        self.idle.append(warm)

    def close(self) -> None:
        for warm in self.idle:
            warm.close()


def bare_per_call(
    cases: int, models, sandboxes, chunk: int | None = None, artifact: dict | None = None
) -> float:
    """Seconds a case through warm sandboxes with the quiz's prompt (or `artifact`) and
    metric; with `chunk`, in batches of that many, one after the other, as gepa asks for
    them. `sandboxes` is a source, or a callable making one per batch."""
    from contract.artifacts import Artifact
    from contract.cases import Case
    from contract.evaluation import evaluate
    from tests import quiz

    rows = quiz.rows()
    many = (
        Case(
            {"country": rows[i % len(rows)]["country"]},
            None,
            {"capital": rows[i % len(rows)]["capital"]},
        )
        for i in range(cases)
    )
    done = 0

    def count(_) -> None:
        nonlocal done
        done += 1

    started = time.perf_counter()
    all_cases = list(many)
    size = chunk or len(all_cases)
    for at in range(0, len(all_cases), size):
        evaluate(
            quiz.SPECIFIC,
            all_cases[at : at + size],
            on_scored=count,
            sandboxes=sandboxes() if callable(sandboxes) else sandboxes,
            timeout_s=20,
            handler_for=models.metric_for,
            task_handler_for=models.task_for,
            artifact=artifact or Artifact.prompt(quiz.SEED).to_job(),
            window=6,
        )
    elapsed = time.perf_counter() - started
    assert done == cases, done
    return elapsed / cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--engine", choices=("gepa", "dspy"), default="gepa")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    dspy = args.engine == "dspy"
    print(
        f"bench_run: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    from tests import quiz
    from tests.providers.conftest import OPENAI_KEY, TEST_CATALOGUE
    from tests.providers.fakes import FakeProvider

    provider = FakeProvider(openai_key=OPENAI_KEY).start()
    latency_s = args.latency_ms / 1000

    def respond(request):
        if latency_s:
            time.sleep(latency_s)
        return quiz.respond_any(request)

    provider.respond = respond
    catalogue = Path(tempfile.mkdtemp(prefix="skynet-bench-models-")) / "catalogue.toml"
    catalogue.write_text(TEST_CATALOGUE.replace("{base}", provider.url))
    model_env = {
        "SKYNET_RUNS_DIR": str(catalogue.parent / "runs"),
        "SKYNET_MODEL_CATALOGUE": str(catalogue),
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": f"{provider.url}/v1",
    }
    stack = Stack(workers=1, keep=args.keep, extra_env=model_env)
    try:
        stack.start()
        from django.conf import settings
        from django.contrib.auth import get_user_model

        from engines.models import RunModels
        from jobs import model_choices, sandbox_pool
        from jobs.queue import enqueue
        from runs import execution
        from runs.models import Run
        from runs.services import RUN_OPTIMIZATION_TASK
        from tests.runs.run_data import make_quiz_run

        settings.RUNS_DIR = stack.tmp / "runs-here"
        owner = get_user_model().objects.create_user(username="bench", password=None)

        program = quiz.DSPY_PROGRAM if dspy else None

        def in_worker(calls: int) -> tuple[Run, float]:
            run = make_quiz_run(
                owner, source=quiz.CAPPED, budget=calls, budget_usd=100.0, program=program
            )
            started = time.perf_counter()
            enqueue(RUN_OPTIMIZATION_TASK, run.pk)
            deadline = time.monotonic() + 1800
            while time.monotonic() < deadline:
                if Run.objects.filter(pk=run.pk, status__in=Run.FINAL).exists():
                    break
                time.sleep(0.05)
            elapsed = time.perf_counter() - started
            run.refresh_from_db()
            assert run.status == "finished", (run.status, run.failure, run.failure_params)
            return run, elapsed

        in_worker(20)  # the worker's first run warms its pools: not measured
        run, elapsed = in_worker(args.calls)
        cases = run.progress["cases_run"]
        per_call_run = elapsed / cases

        found = model_choices.catalogue()
        model = found.resolve("openai/test-gpt")
        bare_models = RunModels(
            task=model, metric=model, reflection=model, env=found.env, max_usd=100, timeout_s=10
        )
        sandboxes = KeptWarm(sandbox_pool.base_config())
        if dspy:
            from contract.artifacts import Artifact
            from contract.runner import Roles

            runs = KeptWarm(sandbox_pool.dspy_config(), preload="dspy")
            job = Artifact.dspy(quiz.DSPY_PROGRAM, output_fields=["capital"]).to_job()
            pair = lambda: Roles(sandboxes, runs)  # noqa: E731 - one per batch
            bare_per_call(12, bare_models, pair, chunk=1, artifact=job)  # warm: not measured
            per_call_bare = bare_per_call(cases, bare_models, pair, chunk=1, artifact=job)
            per_call_batched = bare_per_call(cases, bare_models, pair, artifact=job)
            runs.close()
        else:
            bare_per_call(12, bare_models, sandboxes)  # start the sandboxes before the clock
            per_call_bare = bare_per_call(cases, bare_models, sandboxes)
            per_call_batched = bare_per_call(cases, bare_models, sandboxes, chunk=3)
        bare_models.close()
        sandboxes.close()

        what = "DSPy GEPA run of the quiz's DSPy program" if dspy else "GEPA run of the quiz prompt"
        speed = f"{args.latency_ms:g} ms a model call" if latency_s else "instant fake models"
        print(f"\na {args.calls}-metric-call {what}, {speed}:")
        in_worker_s = (run.finished_at - run.started_at).total_seconds()
        print(f"  end to end (submitted to finished): {elapsed:6.2f} s, {cases} cases run")
        print(f"  in the worker (claimed to finished): {in_worker_s:5.2f} s")
        print(f"  per case, in the run:     {per_call_run * 1000:7.1f} ms")
        print(f"  per case, bare sandbox:   {per_call_bare * 1000:7.1f} ms")
        print(f"  ratio run / bare:         {per_call_run / per_call_bare:7.2f}")
        if dspy:
            print("  (bare: one case at a time; DSPy GEPA runs up to 4 of a batch at once)")
            print(f"  per case, bare, 6 at a time: {per_call_batched * 1000:.1f} ms")
            print(f"  ratio run / bare 6 at a time: {per_call_run / per_call_batched:7.2f}")
        else:
            print(
                f"  per case, bare, 3 at a time (gepa's minibatch): {per_call_batched * 1000:.1f} ms"
            )
            print(f"  ratio run / bare 3 at a time: {per_call_run / per_call_batched:7.2f}")

        # The worker's pool keeps its sandboxes warm between gepa's batches; so does this.
        kept = KeptWarm(sandbox_pool.base_config())
        kept_runs = KeptWarm(sandbox_pool.dspy_config(), preload="dspy")
        sandbox_pool.sandboxes = lambda *_: kept
        sandbox_pool.dspy_sandboxes = lambda: kept_runs
        timed_run(owner, 20, make_quiz_run, execution, program)  # warm them: not measured
        breakdown = timed_run(owner, args.calls, make_quiz_run, execution, program)
        kept.close()
        kept_runs.close()
        total = breakdown.pop("total")
        called = breakdown.pop("model_calls")
        print(f"\nwhere the time of the same run goes (in this process, {total:.2f} s):")
        for name, seconds in breakdown.items():
            print(f"  {name:<34} {seconds:6.2f} s  {100 * seconds / total:5.1f} %")
        print(
            f"  (the task and metric model calls inside the cases took {called:.2f} s, summed over"
        )
        print("   the cases in flight at once)")
    finally:
        stack.stop()
        provider.stop()
    return 0


def timed_run(owner, calls: int, make_quiz_run, execution, program=None) -> dict:
    """The run in this process, each part's time added up where it happens."""
    import contract.evaluation
    import engines.adapter as adapter_module
    from runs.execution import DatabaseSink
    from tests import quiz

    spent = {"evaluate": 0.0, "database": 0.0}
    # Wall time while at least one call of a kind is in flight: DSPy GEPA runs cases from
    # several threads at once, and their times must not add up past the clock.
    active = {"evaluate": 0, "database": 0}
    since = {"evaluate": 0.0, "database": 0.0}
    lock = threading.Lock()

    def timing(key, fn):
        def timed(*args, **kwargs):
            with lock:
                if active[key] == 0:
                    since[key] = time.perf_counter()
                active[key] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with lock:
                    active[key] -= 1
                    if active[key] == 0:
                        spent[key] += time.perf_counter() - since[key]

        return timed

    evaluate = contract.evaluation.evaluate
    adapter_module.evaluate = timing("evaluate", evaluate)
    originals = {
        name: getattr(DatabaseSink, name)
        for name in ("snapshot", "candidates", "events", "checkpoint")
    }
    for name, fn in originals.items():
        setattr(DatabaseSink, name, timing("database", fn))
    models_ms = {}
    original_models = execution.RunModels

    class Measured(original_models):
        def close(self) -> None:
            models_ms["reflection"] = self.reflection.usage.model_ms / 1000
            models_ms["close"] = True
            super().close()

    execution.RunModels = Measured
    captured = {}
    engine = "run_dspy_gepa" if program else "run_gepa"
    original_run = getattr(execution, engine)

    def run_engine(spec, **kwargs):
        outcome, progress = original_run(spec, **kwargs)
        captured["spend"] = progress.adapter.spend
        return outcome, progress

    setattr(execution, engine, run_engine)
    try:
        run = make_quiz_run(
            owner, source=quiz.CAPPED, budget=calls, budget_usd=100.0, program=program
        )
        started = time.perf_counter()
        execution.execute_run(run.pk)
        total = time.perf_counter() - started
    finally:
        adapter_module.evaluate = evaluate
        for name, fn in originals.items():
            setattr(DatabaseSink, name, fn)
        execution.RunModels = original_models
        setattr(execution, engine, original_run)
    spend = captured["spend"]
    case_models = (spend.task.model_ms + spend.metric.model_ms) / 1000
    reflection = models_ms.get("reflection", 0.0)
    gepa = total - spent["evaluate"] - reflection - spent["database"]
    return {
        "total": total,
        "model_calls": case_models,
        "cases (sandbox, with their models)": spent["evaluate"],
        "reflection model": reflection,
        "database (progress writes)": spent["database"],
        "gepa (its loop, state, proposals)": gepa,
    }


if __name__ == "__main__":
    sys.exit(main())
