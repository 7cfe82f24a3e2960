"""The web side's writes to a run: submitting a draft (the wizard's last step, which sends
RUN_OPTIMIZATION_TASK), cancel and resume. The worker's half is runs.execution, which only
runs.tasks imports."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from jobs import queue
from runs.models import Run
from submissions.models import Draft
from submissions.rules import metric_source, problems
from submissions.services import SubmitRefused, run_config

# The runs worker's task (runs.tasks), sent by name: the tasks call the execution, and
# nothing here imports them back.
RUN_OPTIMIZATION_TASK = "runs.run"


@transaction.atomic
def run_submit(draft: Draft, *, name: str = "") -> Run:
    """Queue a run of the draft as it is now; SubmitRefused unless its check passed.

    `name` (optional) names the run and the draft; blank keeps the draft's name."""
    locked = (
        Draft.objects.select_for_update(of=("self",))
        .select_related("contract_check", "dataset")
        .get(pk=draft.pk)
    )
    if Run.objects.filter(draft=locked).exists():
        raise SubmitRefused("already_submitted")
    if problems(locked):
        raise SubmitRefused("check_required")
    assert locked.dataset is not None and locked.contract_check is not None
    name = " ".join(name.split())[:120]
    if name and name != locked.name:
        locked.name = name
        locked.save(update_fields=["name", "updated_at"])
    run = Run.objects.create(
        owner=locked.owner,
        draft=locked,
        name=locked.name,
        config=run_config(locked),
        metric_source=metric_source(locked) or "",
        metric_version=locked.saved_version,
        dataset=locked.dataset,
        contract_check=locked.contract_check,
        enqueued_at=timezone.now(),
    )
    # Sent once the row is committed, so the worker finds it; the sweeps send it again
    # if this message is lost.
    transaction.on_commit(lambda: queue.enqueue(RUN_OPTIMIZATION_TASK, run.pk))
    return run


def run_cancel(run: Run) -> bool:
    """A queued or paused run ends now ("cancelled"), keeping what it found; a running one
    is marked, and its worker stops within a second. False when already final."""
    ended = Run.objects.filter(pk=run.pk, status__in=(Run.Status.QUEUED, Run.Status.PAUSED)).update(
        status=Run.Status.CANCELLED, finished_at=timezone.now(), checkpoint=None
    )
    if not ended:
        ended = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            cancel_requested=True
        )
    return bool(ended)


def run_resume(run: Run) -> bool:
    """Queue a paused run again: a worker goes on from its checkpoint. False unless paused."""
    now = timezone.now()
    resumed = Run.objects.filter(pk=run.pk, status=Run.Status.PAUSED).update(
        status=Run.Status.QUEUED, failure="", failure_params={}, enqueued_at=now
    )
    if resumed:
        transaction.on_commit(lambda: queue.enqueue(RUN_OPTIMIZATION_TASK, run.pk))
    return bool(resumed)
