"""A run's minibatch size, from its configuration to gepa: a run configured with
minibatches of 5 reflects on 5 cases at a time (the run executed here as the runs
worker's task executes it, the models over real HTTP); one configured before the choice
existed keeps gepa's 3."""

from __future__ import annotations

import pytest

from runs import execution
from tests import quiz
from tests.engines.test_minibatch_size import examples_per_reflection
from tests.runs.run_data import make_quiz_run, quiz_models

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"


def reflections_of_a_run(owner, provider, minibatch: int | None) -> list[int]:
    """The cases in each reflection prompt of a quiz run configured with `minibatch`
    (None: a configuration from before the choice)."""
    run = make_quiz_run(owner, source=quiz.USELESS, budget=40)
    if minibatch is not None:
        run.config["minibatch"] = minibatch
        run.save(update_fields=["config"])
    with quiz_models(provider):
        start = len(provider.requests)
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == "finished", run.failure
    return examples_per_reflection(provider.requests[start:])


def test_a_run_configured_with_minibatches_of_5_gives_gepa_5(owner, session_models):
    counts = reflections_of_a_run(owner, session_models, 5)
    assert counts and set(counts) == {5}


def test_a_configuration_without_a_minibatch_size_keeps_gepas_3(owner, session_models):
    counts = reflections_of_a_run(owner, session_models, None)
    assert counts and set(counts) == {3}
