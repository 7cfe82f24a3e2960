"""The run's minibatch size reaches gepa and DSPy GEPA: every reflection prompt holds as
many cases as the spec's minibatch_size (the models over real HTTP, tests.quiz's world,
with feedback that never finds the instruction, so every iteration reflects)."""

from __future__ import annotations

import re

from tests import quiz
from tests.engines import test_dspy_engine, test_gepa_engine

# gepa's default reflection prompt heads each case "# Example N"; DSPy GEPA's lists them
# as JSON objects after its last examples_with_feedback field marker.
EXAMPLE = re.compile(r"^# Example \d+$", re.MULTILINE)
DSPY_EXAMPLES = "[[ ## examples_with_feedback ## ]]"


def examples_per_reflection(requests) -> list[int]:
    """The cases in each of gepa's reflection prompts among the provider's `requests`."""
    return [len(EXAMPLE.findall(r.user)) for r in requests if quiz.REFLECTION_MARK in r.user]


def dspy_examples_per_reflection(requests) -> list[int]:
    return [
        r.user[r.user.rindex(DSPY_EXAMPLES) :].count('{"Inputs":')
        for r in requests
        if quiz.DSPY_REFLECTION_MARK in r.user
    ]


def test_gepa_reflects_on_minibatches_of_the_runs_size(tmp_path, sandboxes, models, provider):
    outcome, _ = test_gepa_engine.run(
        tmp_path, sandboxes, models(), quiz.USELESS, budget=40, minibatch_size=5
    )
    assert outcome.ended == "finished"
    counts = examples_per_reflection(provider.requests)
    assert counts and set(counts) == {5}


def test_gepa_keeps_its_default_of_3(tmp_path, sandboxes, models, provider):
    test_gepa_engine.run(tmp_path, sandboxes, models(), quiz.USELESS, budget=30)
    counts = examples_per_reflection(provider.requests)
    assert counts and set(counts) == {3}


def test_dspy_gepa_reflects_on_minibatches_of_the_runs_size(
    tmp_path, dspy_config, models, provider
):
    outcome, _ = test_dspy_engine.run(
        tmp_path, dspy_config, models(), quiz.USELESS, budget=40, minibatch_size=5
    )
    assert outcome.ended == "finished"
    counts = dspy_examples_per_reflection(provider.requests)
    assert counts and set(counts) == {5}
