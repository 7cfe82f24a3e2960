"""Aligning a judge with people from a script: POST /api/v1/evaluations/{id}/align starts
it as the page's Start does (the dataset version, the run's draft, its contract check),
and POST /api/v1/runs/{id}/accept-prompt accepts the finished run's best prompt as the
run page's button does (a new version of the metric, and the comparison evaluation).
Refusals are the pages' words; another user's evaluation or run, and a run that is no
alignment's, are a 404."""

from __future__ import annotations

from ninja import Field, Router, Schema, Status

from alignment import plans, selectors, services
from alignment.forms import StartForm
from alignment.models import Alignment
from alignment.words import refusal_words
from api.errors import ApiError
from api.evaluation_out import EvaluationOut, evaluation_out
from api.forms import cleaned
from api.schemas import BodyIn
from evaluations import selectors as evaluation_selectors
from evaluations.start_views import WAIT_CODES
from runs import selectors as run_selectors
from wording import words

router = Router()


class AlignIn(BodyIn):
    budget: int | None = Field(
        None,
        description=f"The run's budget in metric calls (default {plans.DEFAULT_BUDGET}), "
        "within the wizard's limits.",
    )


class AlignmentOut(Schema):
    id: int
    evaluation_id: int | None
    metric_id: int
    seed_version: int = Field(description="The number of the metric version it starts from.")
    constant: str = Field(description="The name of the prompt's constant in metric.py.")
    dataset_id: int | None = Field(description="The labelled rows, a version of the dataset.")
    draft_id: int = Field(description="The run's draft (/api/v1/runs/drafts/{id}).")
    check_id: int | None = Field(description="The draft's contract check, once started.")
    check_refused: str | None = Field(
        None, description="Why the check did not start (the user's limits), in words."
    )
    splits: dict[str, int] = Field(description="Labelled rows in train, validation, test.")
    accepted_version: int | None = Field(description="The new version's number, once accepted.")
    comparison_id: int | None = Field(description="The comparison evaluation, once accepted.")


class AcceptOut(Schema):
    alignment: AlignmentOut
    evaluation: EvaluationOut


def alignment_out(alignment: Alignment, check_refused: str | None = None) -> dict:
    draft = alignment.draft
    counts = (draft.dataset_facts or {}).get("counts") or {}
    accepted = alignment.accepted_version
    return {
        "id": alignment.pk,
        "evaluation_id": alignment.evaluation_id,
        "metric_id": alignment.seed_version.metric_id,
        "seed_version": alignment.seed_version.number,
        "constant": alignment.constant,
        "dataset_id": alignment.dataset_id,
        "draft_id": draft.pk,
        "check_id": draft.contract_check_id,
        "check_refused": check_refused,
        "splits": {name: int(counts.get(name, 0)) for name in ("train", "validation", "test")},
        "accepted_version": accepted.number if accepted is not None else None,
        "comparison_id": alignment.comparison_id,
    }


def _refused(code: str, params: dict, status: int = 422) -> ApiError:
    if code == "evaluation_refused" and params.get("code") in WAIT_CODES:
        status = 429
    return ApiError(status, code, message=refusal_words(code, params))


@router.post(
    "/evaluations/{int:evaluation_id}/align",
    response={201: AlignmentOut},
    summary="Align an evaluation's judge with its human labels: start the run's draft",
)
def alignment_start(request, evaluation_id: int, payload: AlignIn | None = None):
    evaluation = evaluation_selectors.get_evaluation_for_user(request.user, evaluation_id)
    budget = payload.budget if payload is not None else None
    form = StartForm({"budget": plans.DEFAULT_BUDGET if budget is None else budget})
    budget = cleaned(form)["budget"]
    try:
        plan = plans.plan_for(evaluation)
        alignment, check_refused = services.alignment_start(plan, budget=budget)
    except plans.NotAlignable as refused:
        raise _refused(refused.code, refused.params) from None
    except services.AlignRefused as refused:
        raise _refused(refused.code, refused.params) from None
    refused_words = None
    if check_refused is not None:
        params = {"limit": check_refused.limit}
        refused_words = words(check_refused.code, params, family="refusal")
    return Status(201, alignment_out(alignment, refused_words))


@router.post(
    "/runs/{int:run_id}/accept-prompt",
    response={202: AcceptOut},
    summary="Save an alignment run's best prompt as a new version of the judge, and "
    "compare the two on the held-out rows",
)
def alignment_accept(request, run_id: int):
    run = run_selectors.get_run_for_user(request.user, run_id)
    alignment = selectors.get_alignment_for_run(request.user, run)
    try:
        evaluation = services.alignment_accept(alignment, run, request.user)
    except services.AlignRefused as refused:
        status = 409 if refused.code in ("already_accepted", "not_finished") else 422
        raise _refused(refused.code, refused.params, status) from None
    found = evaluation_selectors.get_evaluation_for_user(request.user, evaluation.pk)
    return Status(202, {"alignment": alignment_out(alignment), "evaluation": evaluation_out(found)})
