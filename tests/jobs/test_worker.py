"""A real Celery worker on a real Redis runs a check and writes the result to the database."""

from __future__ import annotations

import pytest

from checks.execution import check_claim
from checks.models import Check
from checks.services import check_create
from tests.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

GOOD_METRIC = """
def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""


def test_a_check_enqueued_on_commit_is_run_by_the_worker(owner, celery_worker_process):
    check = check_create(owner=owner, source=GOOD_METRIC, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, timeout=90)
    check.refresh_from_db()
    assert check.status == Check.Status.PASSED
    assert check.result["passed"] is True
    assert [case["status"] for case in check.result["cases"]] == ["valid", "valid", "valid"]
    assert check.started_at and check.finished_at and check.worker


def test_a_redelivered_message_is_a_no_op(owner):
    check = Check.objects.create(owner=owner, source=GOOD_METRIC)
    assert check_claim(check.pk) is True
    assert check_claim(check.pk) is False


def test_the_worker_uses_the_checks_own_cases(owner, celery_worker_process):
    cases = [
        {"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}},
        {"input": {"q": "b"}, "output": "y", "expected": {"label": "x"}},
        {"input": {"q": "c"}, "output": "z", "expected": None},
    ]
    check = check_create(owner=owner, source=GOOD_METRIC, cases=cases, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, timeout=90)
    check.refresh_from_db()
    # The third case has no expected value, so the metric's expected["label"] raises.
    assert check.status == Check.Status.FAILED
    assert check.result["failed_stage"] == "call"
    rows = check.result["cases"]
    assert [row["status"] for row in rows] == ["valid", "valid", "error"]
    assert rows[1]["feedback"] == "Expected 'x', got 'y'."
    assert rows[2]["exception"]["type"] == "TypeError"


def test_one_heartbeat_thread_keeps_every_running_check_alive_and_only_while_it_runs(owner):
    from datetime import timedelta

    from django.utils import timezone

    from jobs import heartbeats

    old = timezone.now() - timedelta(hours=1)
    first, second = (
        Check.objects.create(owner=owner, source=GOOD_METRIC, status=Check.Status.RUNNING)
        for _ in range(2)
    )
    Check.objects.filter(pk__in=[first.pk, second.pk]).update(heartbeat_at=old)

    def beat_of(check):
        return Check.objects.get(pk=check.pk).heartbeat_at

    with heartbeats.beating(Check, first.pk), heartbeats.beating(Check, second.pk):
        assert heartbeats._thread is not None and heartbeats._thread.is_alive()
        assert set(heartbeats.beat_once()) >= {first.pk, second.pk}
        assert beat_of(first) > old and beat_of(second) > old
    ended = beat_of(first)
    with heartbeats.beating(Check, second.pk):
        assert first.pk not in heartbeats.beat_once()
        assert beat_of(second) > ended
    assert beat_of(first) == ended  # no beat once its block is over
    assert first.pk not in heartbeats.beat_once() and second.pk not in heartbeats.beat_once()


def test_a_web_process_wires_up_no_worker_signal():
    """Importing the URLs, views, services and tasks (as the web server does) leaves the
    worker's module unimported: its handlers are connected only when a worker starts."""
    import subprocess
    import sys

    code = (
        "import django, sys; django.setup()\n"
        "import skynet_web.urls, checks.tasks, checks.services, submissions.views\n"
        "print('jobs.worker' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False", done.stderr


def test_a_submitted_run_is_run_by_the_worker_to_the_end(
    owner,
    draft,
    owner_client,
    celery_worker_process,
    session_models,
    django_capture_on_commit_callbacks,
):
    """The whole way: the wizard's submit sends the run's task on commit, the worker's
    runs queue takes it, and the run ends with a better prompt than the seed."""
    from runs.models import Run
    from tests.runs.run_data import quiz_models, submit_quiz_run

    with quiz_models(session_models):
        run = submit_quiz_run(
            owner_client, draft, owner, django_capture_on_commit_callbacks, budget=40, worker=True
        )
        wait_for(lambda: Run.objects.get(pk=run.pk).status in Run.FINAL, timeout=120)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.attempt) == ("finished", "perfect_score", 1)
    assert run.worker and run.started_at and run.finished_at
    assert run.result["best"]["val_mean"] > run.result["seed"]["val_mean"]


def test_a_submitted_dspy_program_is_checked_and_run_by_the_worker(
    owner,
    draft,
    owner_client,
    celery_worker_process,
    session_models,
    django_capture_on_commit_callbacks,
):
    """A DSPy program the whole way through the real worker: its check and its DSPy GEPA
    run, the program in the worker's sandboxes with dspy loaded there."""
    from runs.models import Run
    from tests.runs.run_data import quiz_models, submit_quiz_run

    with quiz_models(session_models):
        run = submit_quiz_run(
            owner_client,
            draft,
            owner,
            django_capture_on_commit_callbacks,
            budget=40,
            worker=True,
            kind="dspy",
            engine="auto",
        )
        wait_for(lambda: Run.objects.get(pk=run.pk).status in Run.FINAL, timeout=120)
    run.refresh_from_db()
    assert run.config["engine"]["resolved"] == "dspy_gepa"
    assert (run.status, run.stop_reason) == ("finished", "perfect_score"), run.failure_params
    assert run.result["best"]["val_mean"] == 1.0 > run.result["seed"]["val_mean"]
