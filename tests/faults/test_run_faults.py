"""Runs in real runs workers on a private Redis: a worker killed mid-run and the run
taken up by another worker from its checkpoint, finishing once; a cancel reaching the
worker; a checkpoint planted in the row, which the worker never unpickles."""

from __future__ import annotations

import os
import pickle
import signal
import time

import pytest

from jobs.queue import enqueue
from runs import services
from runs.models import Run, RunCandidate, RunEvent
from runs.services import RUN_OPTIMIZATION_TASK
from tests import quiz
from tests.conftest import wait_for
from tests.runs.run_data import make_quiz_run, quiz_models
from tests.runs.test_run_checkpoint import Planted

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# 40 ms a metric call: a run of a few hundred calls lasts long enough to kill a worker in
# it; and at most 0.9 a case, so no candidate is perfect and the run goes to its budget.
SLOW = quiz.CAPPED.replace(
    "def score(input, output, expected):\n",
    "import time\n\n\ndef score(input, output, expected):\n    time.sleep(0.04)\n",
)


@pytest.fixture
def run_workers(workers, session_provider, tmp_path):
    """start(name) -> a worker that reaches the session provider, with its own runs folder
    (as a worker on another machine would)."""

    def start(name: str):
        env = {
            **session_provider.env,
            "SKYNET_MODEL_CATALOGUE": session_provider.catalogue_path,
            "SKYNET_RUNS_DIR": str(tmp_path / f"{name}-runs"),
        }
        return workers(name, env)

    with quiz_models(session_provider):
        yield start


def state(run: Run) -> Run:
    return Run.objects.defer("checkpoint").get(pk=run.pk)


def test_a_run_whose_worker_died_resumes_from_its_checkpoint_on_another_and_ends_once(
    owner, run_workers
):
    doomed = run_workers("doomed")
    run = make_quiz_run(owner, source=SLOW, budget=400)
    enqueue(RUN_OPTIMIZATION_TASK, run.pk)

    def far_enough() -> bool:
        now = state(run)
        return now.checkpoint_at is not None and (now.progress or {}).get("iteration", 0) >= 3

    wait_for(far_enough, 120)
    before = state(run)
    kept_candidates = RunCandidate.objects.filter(run=run).count()
    os.killpg(doomed.pid, signal.SIGKILL)
    run_workers("survivor")
    wait_for(lambda: state(run).status in Run.FINAL, 240)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.attempt) == ("finished", "metric_calls", 2)
    kinds = list(RunEvent.objects.filter(run=run).values_list("kind", flat=True))
    assert kinds.count("claimed") == 1 and kinds.count("resumed") == 1
    assert kinds.count("ended") == 1  # only the survivor ended it
    assert RunEvent.objects.get(run=run, kind="resumed").attempt == 2
    # Taken up from the checkpoint, not from scratch: the iterations go on from where the
    # doomed worker's last checkpoint was, and its candidates are kept.
    first_after = (
        RunEvent.objects.filter(run=run, attempt=2, kind="iteration").order_by("id").first()
    )
    assert first_after.iteration > 1
    assert RunCandidate.objects.filter(run=run).count() >= kept_candidates
    assert run.progress["metric_calls"] >= before.progress["metric_calls"]
    assert run.result["best"]["val_mean"] == pytest.approx(0.9)
    # The spend of both attempts adds up, within one dollar budget.
    assert run.progress["spend"]["total_usd"] > before.progress["spend"]["total_usd"]


def test_a_cancel_reaches_the_running_worker_within_seconds(owner, run_workers):
    run_workers("runner")
    run = make_quiz_run(owner, source=SLOW, budget=2000)
    enqueue(RUN_OPTIMIZATION_TASK, run.pk)
    wait_for(lambda: (state(run).progress or {}).get("metric_calls", 0) >= 6, 120)
    assert services.run_cancel(state(run)) is True
    asked = time.monotonic()
    wait_for(lambda: state(run).status in Run.FINAL, 30)
    assert time.monotonic() - asked < 10
    run.refresh_from_db()
    assert run.status == "cancelled" and run.result is not None
    assert services.run_cancel(run) is False  # already final


def test_a_planted_checkpoint_never_runs_in_the_worker(owner, run_workers, tmp_path):
    run_workers("runner")
    marker = tmp_path / "unpickled"
    run = make_quiz_run(owner)
    # As Resume leaves a paused run, its row's checkpoint replaced by a pickle that
    # writes a file when loaded.
    Run.objects.filter(pk=run.pk).update(attempt=1, checkpoint=pickle.dumps(Planted(marker)))
    enqueue(RUN_OPTIMIZATION_TASK, run.pk)
    wait_for(lambda: state(run).status not in (Run.Status.QUEUED, Run.Status.RUNNING), 120)
    assert not marker.exists()
    assert (state(run).status, state(run).failure) == ("failed", "checkpoint_refused")
