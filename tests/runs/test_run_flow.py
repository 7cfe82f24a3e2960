"""A run from the wizard to its end, in this process as the runs worker's task runs it:
every case in the sandbox, the models over real HTTP (tests.quiz), progress as data."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from runs import execution
from runs.models import Run, RunCandidate, RunEvent
from tests import quiz
from tests.runs.run_data import (
    finished_quiz_run,
    quiz_models,
    run_while_failing,
    submit_quiz_run,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    """gepa's run folders go under the test's own folder."""


@pytest.fixture
def quiz_run(owner_client, draft, owner, session_models, django_capture_on_commit_callbacks):
    """quiz_run(**options): the quiz submitted from the wizard and run to its end here."""

    def run(**options):
        return finished_quiz_run(
            owner_client,
            draft,
            owner,
            django_capture_on_commit_callbacks,
            session_models,
            **options,
        )

    return run


def test_a_run_improves_the_prompt_and_records_how(
    owner_client,
    draft,
    owner,
    session_models,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    with quiz_models(session_models):
        run = submit_quiz_run(owner_client, draft, owner, django_capture_on_commit_callbacks)
        assert run.status == "queued" and run.config["budget"] == {"metric_calls": 60, "usd": 5.0}
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.attempt) == ("finished", "perfect_score", 1)
    result = run.result
    assert result["seed"]["val_mean"] == 0.0 and result["best"]["val_mean"] == 1.0
    assert quiz.INSTRUCTION in result["best"]["text"] and result["improvement"] == 1.0
    spend = run.progress["spend"]
    assert spend["task_calls"] >= run.progress["metric_calls"] >= 18
    assert 0 < spend["total_usd"] <= 5.0
    assert spend["total_usd"] == pytest.approx(
        spend["task_usd"] + spend["metric_usd"] + spend["reflection_usd"]
    )
    best = RunCandidate.objects.get(run=run, idx=result["best"]["candidate"])
    assert best.parents == [0] and set(best.val_scores.values()) == {1.0}
    kinds = set(RunEvent.objects.filter(run=run).values_list("kind", flat=True))
    assert {"claimed", "iteration", "proposed", "accepted", "ended"} <= kinds
    # Checkpointed as it went; once it ended, the checkpoint and the folder are let go.
    assert kinds >= {"iteration"} and run.checkpoint_at is not None
    assert run.checkpoint is None and not (tmp_path / "runs" / str(run.pk)).exists()
    # The bundle gains the result and the best prompt.
    bundle = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        assert json.loads(archive.read("result.json"))["best"]["text"] == result["best"]["text"]
        assert archive.read("best-prompt.txt").decode() == result["best"]["text"]


def test_feedback_that_names_nothing_does_not_improve_it(quiz_run):
    run = quiz_run(source=quiz.USELESS, budget=40)
    assert run.status == "finished"
    assert run.result["best"]["val_mean"] == run.result["seed"]["val_mean"] == 0.0
    assert run.result["improvement"] == 0.0


def test_the_dollar_budget_ends_it_with_its_best(quiz_run):
    run = quiz_run(budget=100000, budget_usd="0.01")
    assert (run.status, run.stop_reason) == ("finished", "usd_budget")
    assert run.progress["spend"]["total_usd"] <= 0.01
    assert run.result is not None and run.progress["metric_calls"] < 100000


def test_a_second_delivery_does_nothing(
    owner_client,
    draft,
    owner,
    session_models,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    with quiz_models(session_models):
        run = submit_quiz_run(
            owner_client, draft, owner, django_capture_on_commit_callbacks, budget=20
        )
        execution.execute_run(run.pk)
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert run.attempt == 1 and RunEvent.objects.filter(run=run, kind="ended").count() == 1
    assert Run.objects.get(pk=run.pk).status == "finished"


def test_a_provider_failing_mid_run_pauses_it_and_resume_goes_on(
    owner, session_models, settings, tmp_path, django_capture_on_commit_callbacks
):
    from runs import services
    from tests.providers.fakes import Reply
    from tests.runs.run_data import make_quiz_run

    run = make_quiz_run(owner, budget=60)
    down = Reply(status=503, body={"error": {"message": "overloaded"}}, when=quiz.REFLECTION_MARK)
    with quiz_models(session_models):
        run_while_failing(session_models, run, down, 50)
        assert (run.status, run.failure) == ("paused", "provider_failed")
        assert run.failure_params["role"] == "reflection"
        assert run.failure_params["code"] == "server_error"
        assert "overloaded" in run.failure_params["message"]
        paused_calls = run.progress["metric_calls"]
        assert 0 < paused_calls < 60 and run.checkpoint
        assert run.result["seed"]["val_mean"] == 0.0  # what it found so far is kept
        with django_capture_on_commit_callbacks(execute=False) as sent:
            assert services.run_resume(run) is True
        assert len(sent) == 1
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempt, run.failure) == ("finished", 2, "")
    assert run.result["best"]["val_mean"] == 1.0
    assert run.progress["metric_calls"] > paused_calls
    assert RunEvent.objects.filter(run=run, kind="resumed").count() == 1


def test_a_task_model_that_keeps_failing_pauses_the_run_rather_than_scoring_zeros(
    owner, session_models, settings, tmp_path
):
    from tests.providers.fakes import Reply
    from tests.runs.run_data import make_quiz_run

    run = make_quiz_run(owner, budget=60)
    down = Reply(status=500, body={"error": {"message": "boom"}}, when="capital of")
    with quiz_models(session_models):
        run_while_failing(session_models, run, down, 400)
    assert (run.status, run.failure) == ("paused", "provider_failed")
    assert run.failure_params["role"] == "task"


def test_a_run_of_an_engine_not_run_here_fails_saying_so(owner, session_models, settings, tmp_path):
    from tests.runs.run_data import make_quiz_run

    for engine in ("mipro", "dspy_gepa"):  # unknown; and DSPy GEPA for a prompt template
        run = make_quiz_run(owner)
        run.config["engine"] = {"chosen": engine, "resolved": engine}
        run.save()
        execution.execute_run(run.pk)
        run.refresh_from_db()
        assert (run.status, run.failure) == ("failed", "engine_unavailable")
        assert run.failure_params == {"engine": engine}
