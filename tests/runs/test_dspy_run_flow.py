"""A DSPy GEPA run from the wizard to its end, in this process as the runs worker's task
runs it: the user's DSPy program and metric in the sandbox (real dspy there), dspy.GEPA
here over the program's stand-in, the models over real HTTP in DSPy's format (tests.quiz)."""

from __future__ import annotations

import io
import zipfile

import pytest

from runs import execution
from runs.models import RunCandidate, RunEvent
from tests import quiz
from tests.runs.run_data import make_quiz_run, quiz_models, run_while_failing, submit_quiz_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"


def test_a_dspy_program_from_the_wizard_beats_its_seed(
    owner_client, draft, owner, session_models, django_capture_on_commit_callbacks
):
    with quiz_models(session_models):
        # Auto picks DSPy GEPA for a DSPy program; the check ran the program in the sandbox.
        run = submit_quiz_run(
            owner_client,
            draft,
            owner,
            django_capture_on_commit_callbacks,
            kind="dspy",
            engine="auto",
        )
        assert run.config["engine"] == {"chosen": "auto", "resolved": "dspy_gepa"}
        check = run.contract_check
        assert (
            check.artifact["kind"] == "dspy" and check.result["cases"][0]["run"]["status"] == "ok"
        )
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "perfect_score"), run.failure_params
    result = run.result
    # On the validation cases: the seed's instructions score 0, the best's 1.
    assert result["seed"]["val_mean"] == 0.0 and result["best"]["val_mean"] == 1.0
    seed = RunCandidate.objects.get(run=run, idx=0)
    assert seed.text == "Given the fields `country`, produce the fields `capital`."
    # The reflection model's new instructions: the seed's, and the one the quiz needs.
    assert result["best"]["text"] == f"{seed.text}\n{quiz.INSTRUCTION}"
    spend = run.progress["spend"]
    # Every case ran the program once (one task call) and scored it once.
    assert spend["task_calls"] == run.progress["cases_run"] - 1 >= run.progress["metric_calls"]
    assert spend["reflection_calls"] >= 1 and 0 < spend["total_usd"] <= 5.0
    kinds = set(RunEvent.objects.filter(run=run).values_list("kind", flat=True))
    assert {"claimed", "iteration", "proposed", "accepted", "ended"} <= kinds
    bundle = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        assert archive.read("best-instructions.txt").decode() == result["best"]["text"]
        assert archive.read("program.py").decode() == quiz.DSPY_PROGRAM
    page = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "DSPy GEPA" in page and quiz.INSTRUCTION in page


def test_useless_feedback_does_not_improve_the_program(owner, session_models):
    run = make_quiz_run(owner, source=quiz.USELESS, budget=30, program=quiz.DSPY_PROGRAM)
    with quiz_models(session_models):
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "metric_calls")
    assert run.result["best"]["val_mean"] == run.result["seed"]["val_mean"] == 0.0


def test_a_file_without_a_program_fails_the_run_saying_what_to_define(owner, session_models):
    run = make_quiz_run(owner, program="import dspy\nqa = dspy.Predict('country -> capital')\n")
    with quiz_models(session_models):
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.failure) == ("failed", "program_failed")
    assert run.failure_params["problem"] == "no_program"
    assert RunCandidate.objects.filter(run=run).count() == 0
    from runs.reasons import failure_text

    assert "does not define program, an instance of a dspy.Module" in failure_text(run)


BREAKS_ON_CHILE = """
def score(input, output, expected):
    if input["country"] == "Chile":
        raise ValueError("no answer key for Chile")
    if str(output).strip() == expected["capital"]:
        return 1.0, {"feedback": "Correct: the city name alone."}
    return 0.0, {"feedback": "The output must be the city name only, with no other words."}
"""


def test_a_metric_that_raises_scores_zero_and_shows_per_case(owner, session_models):
    run = make_quiz_run(owner, source=BREAKS_ON_CHILE, budget=40, program=quiz.DSPY_PROGRAM)
    with quiz_models(session_models):
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "metric_calls")
    # Chile (a validation case) makes the metric raise: 0 there for every candidate,
    # counted as the candidate's problem; the other cases still steer the run.
    best = RunCandidate.objects.get(run=run, idx=run.result["best"]["candidate"])
    assert best.idx > 0 and best.problems == {"exception": 1}
    assert sorted(best.val_scores.values()) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    seed = RunCandidate.objects.get(run=run, idx=0)
    assert seed.problems.get("exception", 0) >= 1


def test_the_reflection_provider_failing_pauses_and_resume_goes_on(
    owner, session_models, django_capture_on_commit_callbacks
):
    from runs import services
    from tests.providers.fakes import Reply

    run = make_quiz_run(owner, budget=60, program=quiz.DSPY_PROGRAM)
    down = Reply(
        status=503, body={"error": {"message": "overloaded"}}, when=quiz.DSPY_REFLECTION_MARK
    )
    with quiz_models(session_models):
        run_while_failing(session_models, run, down, 50)
        assert (run.status, run.failure) == ("paused", "provider_failed")
        assert run.failure_params["role"] == "reflection"
        paused_calls = run.progress["metric_calls"]
        assert 0 < paused_calls < 60 and run.checkpoint
        with django_capture_on_commit_callbacks(execute=False):
            assert services.run_resume(run) is True
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempt, run.failure) == ("finished", 2, "")
    assert run.result["best"]["val_mean"] == 1.0
    assert run.progress["metric_calls"] > paused_calls


def test_a_task_model_that_keeps_failing_pauses_the_run(owner, session_models):
    from tests.providers.fakes import Reply

    run = make_quiz_run(owner, budget=60, program=quiz.DSPY_PROGRAM)
    down = Reply(status=500, body={"error": {"message": "boom"}}, when="[[ ## country ## ]]")
    with quiz_models(session_models):
        run_while_failing(session_models, run, down, 400)
    assert (run.status, run.failure) == ("paused", "provider_failed")
    assert run.failure_params["role"] == "task"


def test_the_dollar_budget_ends_it_with_its_best(owner, session_models):
    run = make_quiz_run(
        owner, source=quiz.CAPPED, budget=100000, budget_usd=0.01, program=quiz.DSPY_PROGRAM
    )
    with quiz_models(session_models):
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "usd_budget")
    assert run.progress["spend"]["total_usd"] <= 0.01
    assert run.progress["metric_calls"] < 100000
    # What it found before the money ran out is kept.
    assert run.result["best"]["val_mean"] > run.result["seed"]["val_mean"] == 0.0
