"""/api/v1/runs: optimization runs, read and followed as their pages show them, their
result, best candidate and bundle downloaded, cancelled and resumed by the pages' rules.
Their drafts (made, checked, submitted) are under /runs/drafts (api.routes.run_drafts)."""

from __future__ import annotations

from django.http import HttpResponse
from ninja import Field, Router, Schema

from api.errors import ApiError
from api.routes import run_drafts
from api.run_documents import BestOut, RunOut, best_out, run_out
from api.waiting import WAIT_MAX_S, held
from runs import bundle, selectors, services, sweeps
from runs.models import Run

router = Router()
router.add_router("/drafts", run_drafts.router)

# The runs a list shows, newest first (as the runs page).
LIST_LENGTH = 200


class CancelOut(Schema):
    run: RunOut
    stopping: bool = Field(description="A running run stops within a second; it is live till then.")


def _run(request, run_id: int) -> Run:
    """The user's run as its page shows it (a lost one as the next sweep will leave it)."""
    run = selectors.get_run_for_user(request.user, run_id)
    return sweeps.as_the_sweep_will_leave_it(run)


@router.get("", response=list[RunOut], summary="List your runs, newest first")
def run_list(request):
    runs = selectors.runs_for_user(request.user)[:LIST_LENGTH]
    return [run_out(sweeps.as_the_sweep_will_leave_it(run)) for run in runs]


@router.get("/{int:run_id}", response=RunOut, summary="Read a run: where it stands")
def run_detail(request, run_id: int):
    return run_out(_run(request, run_id))


@router.get(
    "/{int:run_id}/wait",
    response=RunOut,
    summary="Wait for a run to change (answered when its token is no longer `since`, when "
    "it stops being live, or after `timeout` seconds)",
)
def run_wait(request, run_id: int, timeout: float = WAIT_MAX_S, since: str | None = None):
    run = _run(request, run_id)
    if since is None:
        since = selectors.live_token(run)
    if run.is_live and selectors.live_token(run) == since:
        run = held(
            request, timeout, run, lambda seconds: selectors.wait_for_change(run, since, seconds)
        )
    return run_out(run)


@router.get(
    "/{int:run_id}/result",
    response=dict,
    summary="The run's result.json: its best candidate, the seed, their scores, the lineage",
)
def run_result(request, run_id: int):
    run = _run(request, run_id)
    if run.result is None:
        raise ApiError(409, "no_result_yet")
    return run.result


@router.get(
    "/{int:run_id}/best",
    response=BestOut,
    summary="The best candidate (the result's once the run ended, the best so far before)",
)
def run_best(request, run_id: int):
    best = best_out(_run(request, run_id))
    if best is None:
        raise ApiError(409, "no_candidate_yet")
    return best


@router.get(
    "/{int:run_id}/bundle",
    response={200: None},
    summary="The run's bundle: a zip of everything it uses and, once it found something, "
    "its result",
    openapi_extra={
        "responses": {
            200: {
                "description": "The same zip as the run page's download.",
                "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
            }
        }
    },
)
def run_bundle(request, run_id: int):
    run = selectors.get_run_for_user(request.user, run_id)
    response = HttpResponse(bundle.for_run(run), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="skynet-run-{run.pk}.zip"'
    return response


@router.post(
    "/{int:run_id}/cancel", response=CancelOut, summary="Cancel a queued, running or paused run"
)
def run_cancel(request, run_id: int):
    run = _run(request, run_id)
    if run.is_final or not services.run_cancel(run):
        raise ApiError(409, "already_ended")
    run = _run(request, run_id)
    return {"run": run_out(run), "stopping": run.is_live}


@router.post("/{int:run_id}/resume", response=RunOut, summary="Queue a paused run again")
def run_resume(request, run_id: int):
    run = _run(request, run_id)
    if not services.run_resume(run):
        run = _run(request, run_id)
        raise ApiError(409, "not_resumable", params={"status": run.get_status_display()})
    return run_out(_run(request, run_id))
