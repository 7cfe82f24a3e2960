"""A run's metric-call budget is a ceiling, from the worker's execution to the run page:
runs of tests.quiz (every case in the sandbox, the models over real HTTP) at budgets
their batches of 3 and 6 do not divide end finished on their metric calls, never past
them, a resumed one counting its calls before the pause, and the page says how many of
the budget they used and why they stopped short."""

from __future__ import annotations

import pytest

from runs import execution
from tests import quiz
from tests.providers.fakes import Reply
from tests.runs.run_data import make_quiz_run, quiz_models, run_while_failing
from tests.runs.test_run_pages import text_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"


class TaskCalls:
    """The cases that ran from here on, as the task model saw them (each calls it once)."""

    def __init__(self, provider, reflection_mark: str) -> None:
        self.provider = provider
        self.mark = reflection_mark
        self.start = len(provider.requests)

    @property
    def made(self) -> int:
        return sum(1 for r in self.provider.requests[self.start :] if self.mark not in r.user)


def page_of(client, run) -> str:
    return text_of(client.get(f"/en/runs/{run.pk}/").content.decode())


@pytest.mark.parametrize("budget, used", [(47, 42), (151, 150)])
def test_a_run_stops_before_the_step_that_would_pass_its_budget(
    owner_client, owner, session_models, budget, used
):
    run = make_quiz_run(owner, source=quiz.CAPPED, budget=budget)
    with quiz_models(session_models):
        cases = TaskCalls(session_models, quiz.REFLECTION_MARK)
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "metric_calls")
    assert run.progress["metric_calls"] == cases.made == used
    assert run.result["metric_calls"] == used and run.result["best"]["val_mean"] == 0.9
    page = page_of(owner_client, run)
    assert f"{used} of {budget} metric calls" in page
    assert (
        f"It used {used} of its budget of {budget} metric calls: its next step needed 6 "
        "more, which would have passed the budget." in page
    )
    assert "It used its budget" not in page


def test_a_resumed_run_counts_the_calls_it_made_before_its_pause(
    owner_client, owner, session_models, django_capture_on_commit_callbacks
):
    from runs import services

    run = make_quiz_run(owner, source=quiz.CAPPED, budget=25)
    down = Reply(status=503, body={"error": {"message": "overloaded"}}, when=quiz.REFLECTION_MARK)
    with quiz_models(session_models):
        cases = TaskCalls(session_models, quiz.REFLECTION_MARK)
        run_while_failing(session_models, run, down, 50)
        assert (run.status, run.failure) == ("paused", "provider_failed")
        # The seed's 6 validation cases and the first minibatch: 3 past the checkpoint.
        assert run.progress["metric_calls"] == cases.made == 9
        with django_capture_on_commit_callbacks(execute=False):
            assert services.run_resume(run) is True
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempt, run.stop_reason) == ("finished", 2, "metric_calls")
    # Both attempts' calls, within the budget and all on the page: the first iteration
    # again (3 + 3) and its proposal on the validation cases (6), not the seed again.
    assert run.progress["metric_calls"] == cases.made == 21
    assert run.result["best"]["val_mean"] == 0.9
    page = page_of(owner_client, run)
    assert "21 of 25 metric calls" in page
    assert "It used 21 of its budget of 25 metric calls: its next step needed 6 more" in page


def test_a_budget_below_the_cases_candidates_are_compared_on_scores_nothing(
    owner_client, owner, session_models
):
    run = make_quiz_run(owner, source=quiz.CAPPED, budget=5)
    with quiz_models(session_models):
        cases = TaskCalls(session_models, quiz.REFLECTION_MARK)
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.result) == ("finished", "metric_calls", None)
    assert run.progress["metric_calls"] == cases.made == 0
    page = page_of(owner_client, run)
    assert "0 of 5 metric calls" in page
    assert (
        "Its budget of 5 metric calls is less than the 6 cases candidates are compared on, "
        "so not even the starting candidate could be scored." in page
    )


def test_a_dspy_gepa_run_resumed_stays_within_its_budget(
    owner_client, owner, session_models, django_capture_on_commit_callbacks
):
    from runs import services

    run = make_quiz_run(owner, source=quiz.CAPPED, budget=33, program=quiz.DSPY_PROGRAM)
    down = Reply(
        status=503, body={"error": {"message": "overloaded"}}, when=quiz.DSPY_REFLECTION_MARK
    )
    with quiz_models(session_models):
        cases = TaskCalls(session_models, quiz.DSPY_REFLECTION_MARK)
        run_while_failing(session_models, run, down, 50)
        assert (run.status, run.failure) == ("paused", "provider_failed")
        assert 0 < run.progress["metric_calls"] == cases.made
        with django_capture_on_commit_callbacks(execute=False):
            assert services.run_resume(run) is True
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempt, run.stop_reason) == ("finished", 2, "metric_calls")
    assert run.progress["metric_calls"] == cases.made <= 33
    assert run.result["best"]["val_mean"] == 0.9
    page = page_of(owner_client, run)
    assert f"{cases.made} of 33 metric calls" in page and "It used" in page


def test_why_a_run_stopped_short_of_its_metric_calls_reads_in_words():
    from runs import reasons
    from runs.models import Run

    def run(used, budget, **params):
        progress = {"metric_calls": used, "max_metric_calls": budget}
        return Run(
            status="finished",
            stop_reason="metric_calls",
            progress=progress,
            config={},
            failure_params=params,
        )

    assert reasons.stop_text(run(150, 150)) == "It used its budget of 150 metric calls."
    assert reasons.stop_text(run(148, 150, needed=3)) == (
        "It used 148 of its budget of 150 metric calls: its next step needed 3 more, which "
        "would have passed the budget."
    )
    # A row without the batch it stopped before still says only what is true.
    assert reasons.stop_text(run(148, 150)) == "It used 148 of its budget of 150 metric calls."
