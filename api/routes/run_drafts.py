"""/api/v1/runs/drafts: a run's draft made from one body, its contract check started, and
its submit, through the submit wizard's own forms, services and gate."""

from __future__ import annotations

from ninja import Router, Status

from api.draft_body import STEP_FIELDS, DraftIn, draft_save
from api.errors import ApiError
from api.routes.checks import CheckOut, check_out, check_refused
from api.run_documents import DraftOut, RunOut, draft_out, run_out
from checks import services as check_services
from runs import services as run_services
from submissions import rules, selectors, services
from submissions.models import FORM_STEPS, Draft
from wording.wizard import stale_words

router = Router()


def _open_draft(request, draft_id: int) -> Draft:
    """The user's draft, refused (409) once it was submitted: its run has it now."""
    draft = selectors.get_draft_for_user(request.user, draft_id)
    if draft.submitted:
        raise ApiError(409, "already_submitted", family="step")
    return draft


def _not_ready(draft: Draft) -> ApiError:
    """Why the gate is shut: the first step with a problem, or the check (stale when
    the draft changed since it ran)."""
    state = rules.DraftState(draft)
    found = state.problems
    step = next((s for s in FORM_STEPS if s in found), None)
    if step is not None:
        problem = found[step]
        return ApiError(
            409, problem.code, params=problem.params, family="step", field=STEP_FIELDS[step]
        )
    if state.check_state == "stale":
        # Worded as the wizard's page says it: what changed, when the check kept that.
        return ApiError(409, "check_stale", message=stale_words(state.changes))
    check = found.get("check")
    if check is not None and check.code != "check_required":
        # A check that passed but cannot steer the engine (rules.predictor_feedback_problem).
        return ApiError(409, check.code, params=check.params, family="step")
    return ApiError(409, "check_required", family="step")


@router.post("", response={201: DraftOut}, summary="Make a run's draft from one body")
def draft_create(request, payload: DraftIn):
    return Status(201, draft_out(draft_save(payload, request.user)))


@router.get("/{int:draft_id}", response=DraftOut, summary="Read a draft: its problems and its gate")
def draft_detail(request, draft_id: int):
    return draft_out(selectors.get_draft_for_user(request.user, draft_id))


@router.put(
    "/{int:draft_id}",
    response=DraftOut,
    summary="Change a draft (the whole body again); its check then counts only if nothing "
    "it ran changed",
)
def draft_replace(request, draft_id: int, payload: DraftIn):
    draft = _open_draft(request, draft_id)
    return draft_out(draft_save(payload, request.user, draft))


@router.post(
    "/{int:draft_id}/check",
    response={202: CheckOut},
    summary="Start the draft's contract check (wait on /checks/{id}/wait)",
)
def draft_check(request, draft_id: int):
    draft = _open_draft(request, draft_id)
    found = rules.problems(draft)
    if any(step in found for step in FORM_STEPS):
        raise _not_ready(draft)
    try:
        check = services.draft_check_start(draft)
    except check_services.CheckRefused as refused:
        raise check_refused(refused) from None
    return Status(202, check_out(check))


@router.post(
    "/{int:draft_id}/submit",
    response={201: RunOut},
    summary="Submit the draft as a run; 409 unless a passed check covers exactly this draft",
)
def draft_submit(request, draft_id: int):
    draft = selectors.get_draft_for_user(request.user, draft_id)
    try:
        run = run_services.run_submit(draft)
    except services.SubmitRefused as refused:
        if refused.code == "already_submitted":
            raise ApiError(409, "already_submitted", family="step") from None
        raise _not_ready(draft) from None
    return Status(201, run_out(run))
