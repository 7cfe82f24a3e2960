"""An evaluation in a real worker: killed with SIGKILL mid-run it is reaped as lost with
the cases it wrote kept and summarized; cancelled, it stops within seconds."""

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


def test_a_worker_killed_mid_evaluation_is_reaped_and_what_it_wrote_is_kept(owner, workers):
    doomed = workers("doomed")
    evaluation = start(owner)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).done >= 50, 60)
    workers("survivor")
    os.killpg(doomed.pid, signal.SIGKILL)  # the worker and its pool process, at once
    killed_at = time.monotonic()
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).is_final, 60)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED
    assert evaluation.failure == "worker_lost"
    assert time.monotonic() - killed_at < 30
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
