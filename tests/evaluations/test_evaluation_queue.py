"""The line of queued evaluations: a worker's message runs the turn of the one waiting
longest, a queued evaluation's page says where it stands in that line and why it waits,
and a cancel of one waiting for its next turn ends it with the cases its turns wrote.
The rows are set as the worker leaves them; tests/faults/test_evaluation_turns.py has
the worker."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.utils import timezone

from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from evaluations.services import evaluation_cancel, scaled_limits
from tests.evaluations.evaluation_data import LABEL_METRIC, make_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(owner):
    return make_dataset(owner, 10)


@pytest.fixture
def evaluation_of(dataset):
    """evaluation_of(owner, status, queued_s_ago=0, **fields): a row as the worker leaves
    it, sent to the queue `queued_s_ago` seconds ago."""

    def make(owner, status, queued_s_ago: float = 0, **fields) -> Evaluation:
        now = timezone.now()
        queued_at = now - timedelta(seconds=queued_s_ago)
        values = {
            "dataset": dataset,
            "source": LABEL_METRIC,
            "status": status,
            "total": 10,
            "enqueued_at": queued_at,
            "waiting_since": queued_at,
        }
        if status == Evaluation.Status.RUNNING:
            values.update(started_at=now, heartbeat_at=now)
        values.update(fields)
        return Evaluation.objects.create(owner=owner, **values)

    return make


def page_of(client, evaluation: Evaluation) -> str:
    return html.unescape(client.get(f"/en/evaluations/{evaluation.pk}/").content.decode())


def test_behind_another_users_running_evaluation_it_says_its_place_and_why(
    owner_client, owner, outsider, evaluation_of, settings
):
    settings.EVALUATION_TURN_S = 30
    evaluation_of(outsider, Evaluation.Status.RUNNING, queued_s_ago=60)
    mine = evaluation_of(owner, Evaluation.Status.QUEUED)
    page = page_of(owner_client, mine)
    assert (
        "Queued: 1 evaluation ahead of yours (another user's evaluation is running; "
        "evaluations take turns)." in page
    )
    assert (
        "An evaluation runs for about 30 s at a time, then lets the next one in line have "
        "its turn." in page
    )
    assert "Waiting for a worker to pick it up." not in page


def test_the_evaluations_queued_before_it_are_ahead_and_the_ones_after_are_not(
    owner_client, owner, outsider, evaluation_of, django_user_model
):
    carol = django_user_model.objects.create_user(username="carol", password="carol-pass-123")
    evaluation_of(outsider, Evaluation.Status.RUNNING, queued_s_ago=60)
    # Carol's waits for its next turn, sent back to the queue before this one was.
    evaluation_of(carol, Evaluation.Status.QUEUED, queued_s_ago=20, done=4)
    mine = evaluation_of(owner, Evaluation.Status.QUEUED, queued_s_ago=10)
    evaluation_of(carol, Evaluation.Status.QUEUED, queued_s_ago=1)
    assert "Queued: 2 evaluations ahead of yours" in page_of(owner_client, mine)


def test_a_lost_or_finished_evaluation_is_not_ahead(owner_client, owner, outsider, evaluation_of):
    long_ago = timezone.now() - timedelta(hours=1)
    evaluation_of(outsider, Evaluation.Status.RUNNING, queued_s_ago=60, heartbeat_at=long_ago)
    evaluation_of(outsider, Evaluation.Status.DONE, queued_s_ago=60)
    evaluation_of(outsider, Evaluation.Status.QUEUED, queued_s_ago=5)
    mine = evaluation_of(owner, Evaluation.Status.QUEUED)
    # Only the queued one is ahead; the lost one is not running any more.
    assert "Queued: 1 evaluation ahead of yours (evaluations take turns)." in page_of(
        owner_client, mine
    )


def test_behind_its_owners_other_running_evaluation_it_says_so(owner_client, owner, evaluation_of):
    evaluation_of(owner, Evaluation.Status.RUNNING, queued_s_ago=5)
    mine = evaluation_of(owner, Evaluation.Status.QUEUED)
    page = page_of(owner_client, mine)
    assert (
        "Queued: 1 evaluation ahead of yours (your other evaluation is running; "
        "evaluations take turns)." in page
    )


def test_the_live_panel_of_one_waiting_for_its_next_turn_shows_its_cases_and_place(
    owner_client, owner, outsider, evaluation_of
):
    evaluation_of(outsider, Evaluation.Status.RUNNING, queued_s_ago=60)
    mine = evaluation_of(
        owner, Evaluation.Status.QUEUED, done=4, started_at=timezone.now(), progress={}
    )
    live = owner_client.get(
        f"/en/evaluations/{mine.pk}/", {"partial": "live"}, HTTP_HX_REQUEST="true"
    )
    body = html.unescape(live.content.decode())
    assert live.status_code == 200
    assert "4 of 10 cases scored" in body
    assert "Queued: 1 evaluation ahead of yours (another user's" in body


def test_a_cancel_between_turns_ends_it_now_with_the_summary_of_its_cases(owner, evaluation_of):
    waiting = evaluation_of(owner, Evaluation.Status.QUEUED, done=2, started_at=timezone.now())
    EvaluationCase.objects.bulk_create(
        EvaluationCase(evaluation=waiting, index=i, row=i, file_row=i + 2, status="valid", score=s)
        for i, s in enumerate((1.0, 0.5))
    )
    assert evaluation_cancel(waiting) is True
    waiting.refresh_from_db()
    assert (waiting.status, waiting.failure) == (Evaluation.Status.FAILED, "cancelled")
    assert waiting.finished_at is not None
    assert waiting.summary["cases"] == 2 and waiting.summary["counts"]["valid"] == 2
    assert waiting.summary["score"]["mean"] == pytest.approx(0.75)
    assert evaluation_cancel(waiting) is False


def test_a_message_runs_the_turn_of_the_evaluation_waiting_longest(owner, outsider, dataset):
    """A message sent twice (a re-send of one thought lost) cannot let its evaluation pass
    one that waited longer: the line is the rows'."""
    fields = {
        "dataset": dataset,
        "source": LABEL_METRIC,
        "selection": default_selection(),
        "roles": {"question": "input", "label": "output"},
        "recorded_column": "output",
        "total": 10,
        "timeout_s": 10,
        "limits": scaled_limits(10),
    }
    now = timezone.now()
    ahead = Evaluation.objects.create(
        owner=outsider, waiting_since=now - timedelta(seconds=30), **fields
    )
    behind = Evaluation.objects.create(owner=owner, waiting_since=now, **fields)
    execute_evaluation(behind.pk)  # the message of the one behind
    ahead.refresh_from_db()
    behind.refresh_from_db()
    assert (ahead.status, ahead.done) == (Evaluation.Status.DONE, 10)
    assert behind.status == Evaluation.Status.QUEUED
    execute_evaluation(behind.pk)  # its message again: its turn now
    assert Evaluation.objects.get(pk=behind.pk).status == Evaluation.Status.DONE
