"""GEPA through the core: every case's run and metric in the sandbox, the models over
real HTTP (tests.quiz's deterministic task and reflection models), the stops."""

from __future__ import annotations

import os

import pytest

from contract.cancel import Cancel
from engines.engine import RunSpec, run_gepa
from tests import quiz


class Recorder:
    def __init__(self) -> None:
        self.snapshots: list[dict] = []
        self.candidate_rows: dict[int, dict] = {}
        self.event_rows: list[dict] = []
        self.checkpoints = 0

    def snapshot(self, progress: dict) -> None:
        self.snapshots.append(progress)

    def candidates(self, rows: list[dict]) -> None:
        for row in rows:
            self.candidate_rows[row["idx"]] = row

    def events(self, rows: list[dict]) -> None:
        self.event_rows += rows

    def checkpoint(self, run_dir: str) -> None:
        assert os.path.exists(os.path.join(run_dir, "gepa_state.bin"))
        self.checkpoints += 1


def split(rows):
    cases = [
        {"input": {"country": r["country"]}, "expected": {"capital": r["capital"]}} for r in rows
    ]
    return cases[:6], cases[6:]


def run(tmp_path, sandboxes, run_models, source, *, budget=60, cancel=None, **kw):
    train, val = split(quiz.rows())
    spec = RunSpec(
        source=source,
        kind="prompt",
        seed_text=quiz.SEED,
        trainset=train,
        valset=val,
        max_metric_calls=budget,
        run_dir=str(tmp_path / "run"),
        **kw,
    )
    sink = Recorder()
    outcome, progress = run_gepa(
        spec,
        sandboxes=sandboxes,
        budget=run_models.budget,
        reflection=run_models.reflection,
        watch=run_models.watch,
        sink=sink,
        metric_for=run_models.metric_for,
        task_for=run_models.task_for,
        forget=run_models.forget,
        cancel=cancel,
        every_s=0.0,
    )
    return outcome, sink


def test_specific_feedback_finds_the_instruction_and_beats_the_seed(
    tmp_path, sandboxes, models, provider
):
    run_models = models()
    outcome, sink = run(tmp_path, sandboxes, run_models, quiz.SPECIFIC)
    # Perfect on every validation case: nothing left to improve, the rest of the budget kept.
    assert (outcome.ended, outcome.reason) == ("finished", "perfect_score")
    last = sink.snapshots[-1]
    assert last["seed_score"] == 0.0
    assert last["best"]["score"] == 1.0 and last["best"]["idx"] >= 1
    best = sink.candidate_rows[last["best"]["idx"]]
    assert quiz.INSTRUCTION in best["text"] and best["parents"] == [0]
    assert best["val_scores"] == {str(i): 1.0 for i in range(6)}
    assert 6 + 3 + 3 + 6 <= last["metric_calls"] < 60  # seed, parent, child, the child on val
    # Every case's run called the task model once, each metric call is one case.
    spend = last["spend"]
    assert spend["task_calls"] == last["cases_run"] >= last["metric_calls"]
    assert spend["reflection_calls"] >= 1
    assert spend["total_usd"] == pytest.approx(
        spend["task_usd"] + spend["metric_usd"] + spend["reflection_usd"]
    )
    assert spend["total_usd"] > 0
    kinds = {e["kind"] for e in sink.event_rows}
    assert {"iteration", "proposed", "accepted", "valset"} <= kinds
    assert last["points"][0] == [0, 0.0] and last["points"][-1][1] == 1.0
    assert sink.checkpoints >= 1
    # The reflection model never saw the expected values' column name nor the source.
    reflections = [r for r in provider.requests if quiz.REFLECTION_MARK in r.user]
    assert reflections and all(
        "def score" not in r.user and 'capital"' not in r.user for r in reflections
    )
    assert all("city name only" in r.user for r in reflections)


def test_useless_feedback_does_not_improve_the_seed(tmp_path, sandboxes, models):
    outcome, sink = run(tmp_path, sandboxes, models(), quiz.USELESS, budget=40)
    assert outcome.ended == "finished"
    last = sink.snapshots[-1]
    assert last["best"]["score"] == last["seed_score"] == 0.0
    assert all(quiz.INSTRUCTION not in row["text"] for row in sink.candidate_rows.values())


def test_the_dollar_budget_ends_the_run_with_its_best_so_far(tmp_path, sandboxes, models):
    run_models = models(max_usd=0.004)
    outcome, sink = run(tmp_path, sandboxes, run_models, quiz.SPECIFIC, budget=10_000)
    assert (outcome.ended, outcome.reason) == ("finished", "usd_budget")
    assert run_models.budget.usd <= 0.004
    assert sink.snapshots[-1]["metric_calls"] < 10_000


def test_cancel_stops_the_run(tmp_path, sandboxes, models):
    cancel = Cancel()
    cancel.set()
    outcome, _ = run(tmp_path, sandboxes, models(), quiz.SPECIFIC, cancel=cancel)
    assert outcome.ended == "cancelled"


def test_a_provider_that_keeps_failing_pauses_the_run(tmp_path, sandboxes, models, provider):
    from tests.providers.fakes import Reply

    provider.respond = lambda request: quiz.respond(request)
    # Every reflection call fails with 503 on each of the client's attempts.
    provider.queue(
        *[Reply(status=503, body={"error": {"message": "down"}}, when=quiz.REFLECTION_MARK)] * 200
    )
    outcome, sink = run(tmp_path, sandboxes, models(), quiz.SPECIFIC, budget=200)
    assert (outcome.ended, outcome.reason) == ("paused", "provider_failed")
    assert outcome.params["role"] == "reflection" and outcome.params["code"] == "server_error"
    assert sink.snapshots[-1]["metric_calls"] < 200
    assert os.path.exists(tmp_path / "run" / "gepa_state.bin")


def test_a_broken_template_scores_zero_with_the_reason(tmp_path, sandboxes, models):

    run_models = models()
    adapter = quiz_adapter(quiz.SPECIFIC, sandboxes, run_models)
    train, _ = split(quiz.rows())
    for text, words in [
        ("What is the capital of {country?", "not valid"),
        ("What is the capital?", "{country}"),
    ]:
        batch = adapter.evaluate(train[:2], {"artifact": text}, capture_traces=True)
        assert batch.scores == [0.0, 0.0]
        assert all(words in t.feedback for t in batch.trajectories)
    good = adapter.evaluate(
        train[:2], {"artifact": quiz.SEED + " " + quiz.INSTRUCTION}, capture_traces=True
    )
    assert good.scores == [1.0, 1.0] and good.objective_scores == [{"exact": 1.0}] * 2
    dataset = adapter.make_reflective_dataset({}, good, ["artifact"])
    assert set(dataset["artifact"][0]) == {"Inputs", "Generated Outputs", "Feedback"}
    assert "capital" not in dataset["artifact"][0]["Inputs"]


WITH_PREDICTOR_FEEDBACK = quiz.SPECIFIC.replace(
    '"scores": {"exact": 0.0},',
    '"scores": {"exact": 0.0}, "predictor_feedback": {"self": "PREDICTOR-TEXT: not for GEPA."},',
)


def test_gepa_on_a_template_reflects_on_the_feedback_only(sandboxes, models):
    """A template is one component: its reflective dataset reads the case's "feedback",
    never the DSPy predictors' own texts, which the trace keeps for DSPy GEPA only."""

    assert "PREDICTOR-TEXT" in WITH_PREDICTOR_FEEDBACK
    run_models = models()
    adapter = quiz_adapter(WITH_PREDICTOR_FEEDBACK, sandboxes, run_models)
    train, _ = split(quiz.rows())
    batch = adapter.evaluate(train[:2], {"artifact": quiz.SEED}, capture_traces=True)
    assert batch.scores == [0.0, 0.0]
    assert all(
        t.predictor_feedback == {"self": "PREDICTOR-TEXT: not for GEPA."}
        for t in batch.trajectories
    )
    records = adapter.make_reflective_dataset({}, batch, ["artifact"])["artifact"]
    assert [r["Feedback"] for r in records] == [
        "The output must be the city name only, with no other words."
    ] * 2
    assert "PREDICTOR-TEXT" not in repr(records)


# Fails on the outputs the improved prompt gets (a bare city name): a metric that breaks
# on new candidates.
BREAKS_ON_NEW = quiz.SPECIFIC.replace(
    '    if str(output).strip() == expected["capital"]:\n',
    '    if " " not in str(output).strip():\n        raise ValueError("cannot parse")\n'
    '    if str(output).strip() == expected["capital"]:\n',
)


def test_a_metric_that_fails_on_new_candidates_is_reported_per_candidate(
    tmp_path, sandboxes, models
):
    outcome, sink = run(tmp_path, sandboxes, models(), BREAKS_ON_NEW, budget=30)
    assert outcome.ended == "finished"  # not a crash
    rejected = [e for e in sink.event_rows if e["kind"] == "rejected"]
    # Each proposal's minibatch of 3 failed in the metric: counted against that candidate.
    assert rejected
    assert all(set(e["data"]["problems"]) == {"exception"} for e in rejected)
    assert all(e["data"]["problems"]["exception"] >= 3 for e in rejected)
    assert sink.snapshots[-1]["best"]["idx"] == 0


def test_a_runs_metric_imports_its_helper_modules(tmp_path, sandboxes, models):
    """A metric checked with helper files (src/compare.py) scores a run's cases with them:
    the run's engine hands them to every case as the check did."""
    from engines.adapter import MetricFailed

    metric = (
        "from src.compare import same\n\n"
        "def score(input, output, expected=None):\n"
        "    right = same(output, expected['capital'])\n"
        "    return float(right), {'feedback': 'Same city.' if right else 'Name the capital.'}\n"
    )
    helper = "def same(a, b):\n    return (a or '').strip().lower() == b.strip().lower()\n"
    run_models = models()

    def adapter(files):
        return quiz_adapter(metric, sandboxes, run_models, files=files)

    train, _ = split(quiz.rows())
    candidate = {"artifact": quiz.SEED + " " + quiz.INSTRUCTION}
    batch = adapter({"src/compare.py": helper}).evaluate(train[:2], candidate)
    assert batch.scores == [1.0, 1.0]
    # Without them, the metric stops loading, naming the module it misses.
    with pytest.raises(MetricFailed) as stopped:
        adapter(None).evaluate(train[:2], candidate)
    assert "src.compare" in repr(stopped.value.params)


def quiz_adapter(source: str, sandboxes, run_models, **more):
    """The adapter GEPA runs the quiz's prompt template with, scored by `source`."""
    from engines.adapter import SandboxAdapter

    return SandboxAdapter(
        source=source,
        kind="prompt",
        program_source="",
        seed_text=quiz.SEED,
        sandboxes=sandboxes,
        timeout_s=10,
        metric_for=run_models.metric_for,
        task_for=run_models.task_for,
        **more,
    )
