"""A metric's text with a NUL or a lone surrogate in it is stored, and shown, the same on
SQLite and PostgreSQL (which refuses both): each becomes U+FFFD, and the check, the
evaluation and the run end as they would have without it. Through the real worker."""

from __future__ import annotations

import pytest

from checks.models import Check
from checks.services import check_create
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from evaluations.services import evaluation_create
from tests import quiz
from tests.conftest import wait_for
from tests.evaluations.evaluation_data import make_dataset

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# The child sends a lone surrogate as "?", but metric code can reach the channel's
# encoder and send it JSON-escaped, as the worker then reads it.
ESCAPED_FRAMES = """
import json
from skynet import wire

wire._dumps = lambda obj, **kw: json.dumps(obj, **{**kw, "ensure_ascii": True})
"""
HOSTILE_TEXT = (
    ESCAPED_FRAMES
    + r"""
def score(input, output, expected=None):
    print("printed\x00")
    if output == "boom":
        raise ValueError("boom\x00\udfff")
    return 1.0, {"feedback": "nul\x00, lone \ud800.", "scores": {"named\x00": 1.0}}
"""
)
FEEDBACK = "nul\ufffd, lone \ufffd."


def test_a_checks_text_is_stored_and_shown_cleaned_and_the_check_passes(
    owner, owner_client, celery_worker_process
):
    check = check_create(owner=owner, source=HOSTILE_TEXT, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, timeout=90)
    check.refresh_from_db()
    assert (check.status, check.failure) == (Check.Status.PASSED, "")
    case = check.result["cases"][0]
    assert case["feedback"] == FEEDBACK
    assert case["scores"] == {"named\ufffd": 1.0}
    assert case["stdout"] == "printed\ufffd\n"
    page = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert FEEDBACK in page and "\x00" not in page


def test_an_evaluations_cases_are_stored_and_shown_cleaned_and_it_ends_done(
    owner, owner_client, celery_worker_process
):
    dataset = make_dataset(owner, 11)  # row 10's output is "boom": that case raises
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=11,
        source=HOSTILE_TEXT,
        timeout_s=10,
    )
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).is_final, timeout=90)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.failure) == (Evaluation.Status.DONE, "")
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert len(cases) == 11
    assert {c.feedback for c in cases[:10]} == {FEEDBACK}
    assert cases[0].scores == {"named\ufffd": 1.0}
    assert cases[0].detail["stdout"] == "printed\ufffd\n"
    raised = cases[10]
    assert (raised.status, raised.exception_type) == ("error", "ValueError")
    assert raised.detail["exception"]["message"] == "boom\ufffd\ufffd"
    page = owner_client.get(f"/en/evaluations/{evaluation.pk}/cases/0/").content.decode()
    assert FEEDBACK in page and "\x00" not in page


def _quoting_reflection(request) -> str:
    """quiz's models, with a reflection model that quotes the feedback it was shown in
    its proposal, as a real one may, and ends the quote with a NUL of its own."""
    answer = quiz.respond_any(request)
    if quiz.REFLECTION_MARK not in request.user:
        return answer
    quoted = next(line for line in request.user.splitlines() if "no other words" in line)
    return answer.replace(quiz.INSTRUCTION, f"{quiz.INSTRUCTION}\n{quoted.strip()}\x00")


def test_a_runs_candidates_and_events_are_stored_cleaned_and_it_finishes(
    owner,
    draft,
    owner_client,
    celery_worker_process,
    session_models,
    django_capture_on_commit_callbacks,
):
    from runs.models import Run, RunCandidate, RunEvent
    from tests.runs.run_data import submit_quiz_run

    source = ESCAPED_FRAMES + quiz.SPECIFIC.replace(
        "with no other words.", "with no other words\\x00\\ud800."
    )
    session_models.respond = _quoting_reflection
    try:
        run = submit_quiz_run(
            owner_client,
            draft,
            owner,
            django_capture_on_commit_callbacks,
            source=source,
            budget=40,
            worker=True,
        )
        ended = (*Run.FINAL, Run.Status.PAUSED)
        wait_for(lambda: Run.objects.get(pk=run.pk).status in ended, timeout=120)
    finally:
        session_models.respond = None
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "perfect_score"), run.failure_params
    # The metric's NUL and surrogate reached the reflection model cleaned, and its own
    # NUL was stored cleaned.
    quote = "with no other words\ufffd\ufffd.\ufffd"
    best = RunCandidate.objects.get(run=run, idx=run.result["best"]["candidate"])
    assert quote in best.text and quote in run.result["best"]["text"]
    proposed = [e.data["text"] for e in RunEvent.objects.filter(run=run, kind="proposed")]
    assert any(quote in text for text in proposed)
