"""An evaluation in a real worker: when its worker is killed with SIGKILL mid-run, it goes
back in line and another worker goes on from the cases written, each case scored once;
lost as many times as it may, it fails keeping what was written; cancelled, it stops
within seconds."""

from __future__ import annotations

import os
import signal
import time

import pytest

from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from evaluations.services import evaluation_cancel, evaluation_create
from tests.conftest import wait_for
from tests.evaluations.evaluation_data import make_dataset

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# 20 ms a case: 2,000 cases take long enough to be killed or cancelled in the middle.
SLOW = (
    "import time\n\n\ndef score(input, output, expected=None):\n"
    "    time.sleep(0.02)\n    return 1.0, {'feedback': 'Fine.'}\n"
)


def start(owner, rows: int = 2000) -> Evaluation:
    return evaluation_create(
        owner=owner,
        dataset=make_dataset(owner, rows),
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=rows,
        source=SLOW,
        timeout_s=20,
    )


def written(evaluation: Evaluation) -> int:
    return EvaluationCase.objects.filter(evaluation=evaluation).count()


def test_an_evaluation_whose_worker_is_killed_resumes_on_another_and_scores_each_case_once(
    owner, workers, owner_client
):
    doomed = workers("doomed")
    evaluation = start(owner)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).done >= 50, 60)
    # Killed first, the other started after: however fast the machine, the evaluation
    # cannot have ended before its worker died.
    os.killpg(doomed.pid, signal.SIGKILL)  # the worker and its pool process, at once
    workers("survivor")
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).lost == 1, 60)
    page = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "Its worker was lost 1 time: it went back in line" in page
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).is_final, 120)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE and evaluation.failure == ""
    assert evaluation.lost == 1
    # Every case once: what the killed worker wrote kept, the rest scored by the other.
    indexes = sorted(
        EvaluationCase.objects.filter(evaluation=evaluation).values_list("index", flat=True)
    )
    assert indexes == list(range(2000))
    assert evaluation.done == 2000 and evaluation.summary["counts"]["valid"] == 2000


def test_an_evaluation_lost_as_often_as_it_may_fails_keeping_its_cases(owner, workers, settings):
    settings.EVALUATION_MAX_ATTEMPTS = 1  # this process's sweep decides, with this
    settings.CHECK_STALE_AFTER_S = 4  # and the workers' fast clock
    from evaluations.sweeps import reap_stale

    doomed = workers("doomed")
    evaluation = start(owner)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).done >= 50, 60)
    os.killpg(doomed.pid, signal.SIGKILL)
    wait_for(
        lambda: reap_stale(pk=evaluation.pk) or Evaluation.objects.get(pk=evaluation.pk).is_final,
        60,
    )
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED
    assert evaluation.failure == "worker_lost" and evaluation.lost == 1
    kept = written(evaluation)
    assert 50 <= kept < 2000
    # The sweep summarized what was written: the page shows the cases that ran.
    assert evaluation.summary["cases"] == kept
    assert evaluation.summary["counts"]["valid"] == kept


def test_a_cancelled_evaluation_stops_within_seconds_and_keeps_its_cases(owner, workers):
    workers("runner")
    evaluation = start(owner)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).done >= 20, 60)
    assert evaluation_cancel(evaluation) is True
    asked = time.monotonic()
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).is_final, 30)
    assert time.monotonic() - asked < 10
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED and evaluation.failure == "cancelled"
    kept = written(evaluation)
    assert 20 <= kept < 2000 and evaluation.done == kept
    assert evaluation.summary["cases"] == kept
    assert evaluation_cancel(evaluation) is False  # already final
