"""Evaluations of different users take turns in one real evaluations worker (concurrency
1, as `serve` starts it): a small one started behind a big one ends first, and its page
says why it waits; an evaluation taken in turns scores the same cases, with the same
summary, as one in one go, within one model budget; a cancel between turns or within
one ends it with the cases it wrote."""

from __future__ import annotations

import html

import pytest
from django.conf import settings
from django.db import transaction

from evaluations import selectors
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection, select_rows_of
from evaluations.services import evaluation_cancel, evaluation_create
from tests.conftest import wait_for
from tests.evaluations.evaluation_data import LABEL_METRIC, make_dataset

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SLEEP = "import time\n\n\ndef score(input, output, expected=None):\n    time.sleep({s})\n"
# 20 ms a case: 2,000 cases hold the worker for many seconds.
SLOW = SLEEP.format(s=0.02) + "    return 1.0, {'feedback': 'Fine.'}\n"
# The labels metric (valid, invalid and error cases), 20 ms a case.
SLOW_LABELS = LABEL_METRIC.replace(
    "def score(input, output, expected=None):\n", SLEEP.format(s=0.02)
)
# One call of the metric model a case, 50 ms a case.
SLOW_JUDGE = SLEEP.format(s=0.05) + (
    "    from skynet import llm\n\n"
    "    verdict = llm('Judge: ' + output)\n"
    "    return 1.0, {'feedback': verdict}\n"
)
# What differs between two scorings of the same cases: how long they took.
TIMES = ("metric_ms", "run_ms", "total_ms")


@pytest.fixture
def turn_worker(workers):
    """start(turn_s, env) -> the one evaluations worker, with turns of `turn_s` seconds.
    Its fast sweeps send a queued row's message again after 2 s: messages sent twice, as
    a real worker's sweeps send them after a minute, which must not reorder the line."""

    def start(turn_s: int, env: dict | None = None):
        return workers("turns", {"SKYNET_EVALUATION_TURN_S": str(turn_s), **(env or {})})

    return start


def start(owner, dataset, source: str, selection: dict | None = None, **fields) -> Evaluation:
    selection = selection or default_selection()
    return evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=selection,
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=len(select_rows_of(dataset.row_count, selection, lambda: None)),
        source=source,
        timeout_s=20,
        **fields,
    )


def state(evaluation: Evaluation) -> Evaluation:
    return Evaluation.objects.get(pk=evaluation.pk)


def final(*evaluations: Evaluation):
    return lambda: all(state(evaluation).is_final for evaluation in evaluations)


def written(evaluation: Evaluation) -> int:
    return EvaluationCase.objects.filter(evaluation=evaluation).count()


def test_a_small_evaluation_started_behind_another_users_big_one_ends_first(
    owner, outsider, client, turn_worker, settings
):
    turn_worker(5)
    settings.EVALUATION_TURN_S = 5  # the site reads what the worker does
    big_rows, small_rows = make_dataset(outsider, 2000), make_dataset(owner, 5)
    big = start(outsider, big_rows, SLOW)
    wait_for(lambda: state(big).status == Evaluation.Status.RUNNING, 60)
    small = start(owner, small_rows, SLOW)
    # While it waits, its page says where it stands and why.
    client.force_login(owner)
    page = html.unescape(client.get(f"/en/evaluations/{small.pk}/").content.decode())
    assert state(small).status == Evaluation.Status.QUEUED
    assert (
        "Queued: 1 evaluation ahead of yours (another user's evaluation is running; "
        "evaluations take turns)." in page
    )
    assert "An evaluation runs for about 5 s at a time" in page

    wait_for(final(big, small), 180)
    big, small = state(big), state(small)
    assert (big.status, small.status) == (Evaluation.Status.DONE, Evaluation.Status.DONE)
    assert small.finished_at < big.finished_at
    # The big one handed the worker over and went on: every case once, in one summary.
    assert big.progress["turns"] >= 2
    assert big.done == written(big) == big.summary["cases"] == 2000
    assert small.done == written(small) == 5


def _cases(evaluation: Evaluation) -> list[dict]:
    rows = EvaluationCase.objects.filter(evaluation=evaluation).order_by("index")
    skip = {"id", "evaluation_id", *TIMES}
    return [
        {name: value for name, value in row.items() if name not in skip} for row in rows.values()
    ]


def _summary(evaluation: Evaluation) -> dict:
    return {k: v for k, v in evaluation.summary.items() if k not in ("time", "slowest")}


def _download(evaluation: Evaluation) -> list[dict]:
    return [
        {name: value for name, value in row.items() if name not in TIMES}
        for row in selectors.download_rows(evaluation)
    ]


def test_an_evaluation_taken_in_turns_scores_what_one_in_one_go_does(owner, outsider, turn_worker):
    turn_worker(1)
    # A sample of the train split: the rows scored are not the dataset's first ones.
    dataset = make_dataset(owner, 1500)
    selection = default_selection(split="train", sample=900, sample_seed=3)
    other_rows = make_dataset(outsider, 1500)
    taken = start(owner, dataset, SLOW_LABELS, selection)
    other = start(outsider, other_rows, SLOW_LABELS)
    wait_for(final(taken, other), 240)
    alone = start(owner, dataset, SLOW_LABELS, selection)
    wait_for(final(alone), 240)
    taken, other, alone = state(taken), state(other), state(alone)

    assert (taken.status, alone.status) == (Evaluation.Status.DONE, Evaluation.Status.DONE)
    assert taken.progress["turns"] >= 3 and alone.progress["turns"] == 1
    assert taken.done == alone.done == taken.total == 900
    assert _cases(taken) == _cases(alone)
    assert _summary(taken) == _summary(alone)
    assert _download(taken) == _download(alone)
    assert taken.progress["counts"] == alone.progress["counts"]
    # Its rate reads over the whole evaluation: it started before the other one did.
    assert taken.started_at < other.started_at < taken.finished_at


def test_a_cancel_between_turns_or_within_one_ends_it_with_its_cases(owner, outsider, turn_worker):
    turn_worker(1)
    first_rows, second_rows = make_dataset(owner, 2000), make_dataset(outsider, 2000)
    first = start(owner, first_rows, SLOW)
    second = start(outsider, second_rows, SLOW)

    # Waiting for its next turn, with cases written: it ends at once, with their summary.
    between = wait_for(
        lambda: (row := state(second)).status == Evaluation.Status.QUEUED and row.done and row,
        60,
    )
    assert evaluation_cancel(between) is True
    second = state(second)
    assert (second.status, second.failure) == (Evaluation.Status.FAILED, "cancelled")
    kept = written(second)
    assert 0 < kept < 2000 and second.done == kept == second.summary["cases"]

    # Within a later turn: its worker stops it, keeping the cases it wrote.
    within = wait_for(
        lambda: (
            (row := state(first)).status == Evaluation.Status.RUNNING
            and row.progress.get("turns", 0) >= 2
            and row
        ),
        60,
    )
    assert evaluation_cancel(within) is True
    wait_for(final(first), 30)
    first = state(first)
    assert (first.status, first.failure) == (Evaluation.Status.FAILED, "cancelled")
    assert 0 < written(first) < 2000 and first.done == written(first) == first.summary["cases"]
    # The cancelled one's messages, already sent, wrote nothing more of it.
    assert written(second) == kept and state(second).status == Evaluation.Status.FAILED


def test_the_model_budget_holds_for_all_the_turns_together(
    owner, outsider, turn_worker, session_provider
):
    turn_worker(
        1,
        {**session_provider.env, "SKYNET_MODEL_CATALOGUE": session_provider.catalogue_path},
    )
    judged_rows, other_rows = make_dataset(owner, 600), make_dataset(outsider, 2000)
    with transaction.atomic():  # sent on commit: with these limits
        judged = start(owner, judged_rows, SLOW_JUDGE, metric_model="openai/test-gpt")
        Evaluation.objects.filter(pk=judged.pk).update(
            limits={"max_calls": 400, "max_tokens": 10**8, "max_usd": 100.0}
        )
    other = start(outsider, other_rows, SLOW)
    wait_for(final(judged), 240)
    judged = state(judged)
    evaluation_cancel(other)

    assert judged.status == Evaluation.Status.DONE and judged.progress["turns"] >= 2
    # 400 calls in all, whatever the turns: the rest of the cases were refused one. A
    # turn ends at its time, stopping the cases in flight, whose calls count against the
    # budget though the cases are scored again: the cases written made at most 400.
    assert judged.progress["budget"]["metric"]["calls"] == 400
    calls = judged.summary["cost"]["model_calls_total"]
    assert 400 - 2 * settings.EVALUATION_WINDOW * judged.progress["turns"] <= calls <= 400
    assert judged.summary["counts"]["valid"] == calls
    assert judged.summary["counts"]["error"] == 600 - calls


def test_a_turn_ends_at_its_time_though_its_cases_are_slow_and_they_are_scored_again(
    owner, outsider, turn_worker
):
    """Cases of 12 s, turns of 2 s: another user's evaluation starts and ends while the
    slow one's first cases are still in flight, and those are scored next turn. Before,
    the turn lasted as long as its slowest case, and the other waited 12 s for it."""
    turn_worker(2)
    slow_source = SLEEP.format(s=12) + "    return 1.0, {'feedback': 'Fine.'}\n"
    slow_rows, quick_rows = make_dataset(outsider, 3), make_dataset(owner, 2)
    slow = evaluation_create(
        owner=outsider,
        dataset=slow_rows,
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=3,
        source=slow_source,
        timeout_s=60,
    )
    wait_for(lambda: state(slow).status == Evaluation.Status.RUNNING, 60)
    quick = start(owner, quick_rows, SLOW)
    wait_for(final(quick), 11)
    assert state(quick).status == Evaluation.Status.DONE
    # None of the slow one's cases had ended: they were stopped, not written.
    assert written(slow) == 0 and state(slow).status != Evaluation.Status.DONE
    wait_for(final(slow), 90)
    slow = state(slow)
    assert slow.status == Evaluation.Status.DONE and slow.progress["turns"] >= 2
    assert sorted(_index for _index in _indexes(slow)) == [0, 1, 2]


def _indexes(evaluation: Evaluation) -> list[int]:
    return list(
        EvaluationCase.objects.filter(evaluation=evaluation).values_list("index", flat=True)
    )
