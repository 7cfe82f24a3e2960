"""DSPy GEPA through the core: the user's DSPy program and metric in the sandbox (the
program with dspy loaded, its model calls over the case's socket), dspy.GEPA over the
stand-in in this process, the models over real HTTP (tests.quiz's DSPy world)."""

from __future__ import annotations

import dataclasses

import pytest

from contract import sandbox
from contract.runner import OnDemand
from contract.sandbox import site
from optimizer.dspy_engine import run_dspy_gepa
from optimizer.engine import RunSpec
from tests import quiz
from tests.optimizer.test_gepa_engine import Recorder, split


@pytest.fixture(scope="module")
def dspy_config():
    config = sandbox.SandboxConfig()
    staged = site.site_packages(sandbox.stage_gid(config))
    assert staged, "dspy's packages could not be staged for the sandbox"
    return dataclasses.replace(config, site_packages=staged)


def run(tmp_path, config, run_models, source, *, program=quiz.DSPY_PROGRAM, budget=60):
    train, val = split(quiz.rows())
    spec = RunSpec(
        source=source,
        kind="dspy",
        seed_text="",
        program_source=program,
        trainset=train,
        valset=val,
        max_metric_calls=budget,
        run_dir=str(tmp_path / "run"),
        output_fields=("capital",),
    )
    sink = Recorder()
    outcome, _ = run_dspy_gepa(
        spec,
        sandboxes=OnDemand(config),
        run_sandboxes=OnDemand(config, preload="dspy"),
        budget=run_models.budget,
        reflection=run_models.reflection,
        watch=run_models.watch,
        sink=sink,
        metric_for=run_models.metric_for,
        task_for=run_models.task_for,
        forget=run_models.forget,
        every_s=0.0,
    )
    return outcome, sink


def test_specific_feedback_improves_the_program(tmp_path, dspy_config, models, provider):
    run_models = models()
    outcome, sink = run(tmp_path, dspy_config, run_models, quiz.SPECIFIC)
    assert (outcome.ended, outcome.reason) == ("finished", "perfect_score")
    last = sink.snapshots[-1]
    assert last["seed_score"] == 0.0
    assert last["best"]["score"] == 1.0
    best = sink.candidate_rows[last["best"]["idx"]]
    assert quiz.INSTRUCTION in best["text"]
