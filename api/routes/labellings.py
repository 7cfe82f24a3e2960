"""/api/v1/labellings: the labellings a user owns and those shared with them, one case at a
time, a label put, and the owner's new dataset version. The same rules, words and limits
as the pages (labelling/): a case's metric score and other people's labels come only once
you have labelled its row; an invitee labels, and reaches nothing else of the owner's;
anyone else gets 404 for every one of these."""

from __future__ import annotations

import datetime

from ninja import Field, Router, Schema, Status

from api.errors import ApiError
from api.routes.datasets import DatasetBriefOut, brief_out, dataset_refused
from api.schemas import BodyIn
from dataset_files import DatasetError
from labelling import cases, presenters, selectors, services, versions
from labelling.models import Labelling
from labelling.services import NOTE_MAX
from labelling.words import label_refusal

router = Router()

LIST_LIMIT = 200


class LabellingOut(Schema):
    id: int
    dataset_name: str
    kind: str = Field(description="pass_fail (labels 1 = pass, 0 = fail) or scale (1 to N).")
    scale: int = Field(description="N of a scale; 2 for pass_fail.")
    values: list[int] = Field(description="The labels a case may get.")
    cases: int = Field(description="How many cases there are to label.")
    labelled: int = Field(description="How many of them you have labelled.")
    next_case: int = Field(description="The number of the first case you have not labelled.")
    mine: bool = Field(description="True when you own it; false when it is shared with you.")
    owner: str
    created_at: datetime.datetime


class LabelOut(Schema):
    value: float
    text: str = Field(description="Pass or Fail, or the number, in your language.")
    note: str


class OtherLabelOut(LabelOut):
    labeller: str


class MetricOut(Schema):
    status: str
    score: float | None
    feedback: str


class RevealedOut(Schema):
    metric: MetricOut | None = Field(
        description="The evaluation's score and feedback of the row; null when it has none."
    )
    others: list[OtherLabelOut] = Field(
        description="Other people's labels of the row: everyone's for the owner, the "
        "owner's for an invitee."
    )


class CaseOut(Schema):
    number: int = Field(description="The case's place in the labelling, from 1.")
    row: int = Field(description="The dataset row, from 0.")
    input: dict[str, str | None]
    output: str | None
    expected: str | None
    label: LabelOut | None = Field(description="Your label; null until you give one.")
    revealed: RevealedOut | None = Field(
        description="Null until you have labelled the row, so that it does not sway you."
    )


class LabelIn(BodyIn):
    row: int = Field(ge=0, description="The dataset row, from 0 (a case's `row`).")
    value: int | None = Field(
        None, description="1 or 0 (pass/fail) or 1 to N; null keeps the label and sets the note."
    )
    note: str | None = Field(None, max_length=NOTE_MAX, description="Null keeps the note.")


class VersionOut(Schema):
    dataset: DatasetBriefOut
    parent_id: int | None
    reused: bool = Field(
        description="True when you had this very file already: it is the answer, nothing stored."
    )


def _labelling_out(labelling: Labelling, user) -> dict:
    return {
        "id": labelling.pk,
        "dataset_name": labelling.dataset_name,
        "kind": labelling.kind,
        "scale": labelling.scale,
        "values": labelling.values,
        "cases": labelling.total,
        "labelled": selectors.labelled_count(labelling, user),
        "next_case": selectors.first_unlabelled(labelling, user) + 1,
        "mine": labelling.owner_id == user.pk,
        "owner": labelling.owner.get_username(),
        "created_at": labelling.created_at,
    }


def _label_out(label: dict | None) -> dict | None:
    if label is None:
        return None
    return {"value": label["value"], "text": label["text"], "note": label["note"]}


def _case_out(labelling: Labelling, user, case: cases.Case) -> dict:
    view = presenters.case_view(labelling, user, case)
    revealed = view["revealed"]
    if revealed is not None:
        metric = revealed["metric"]
        revealed = {
            "metric": None
            if metric is None
            else {k: metric[k] for k in ("status", "score", "feedback")},
            "others": [
                {**_label_out(other), "labeller": other["labeller"]} for other in revealed["others"]
            ],
        }
    return {
        "number": view["number"],
        "row": view["row"],
        "input": dict(view["input"]),
        "output": view["output"],
        "expected": view["expected"],
        "label": _label_out(view["label"]),
        "revealed": revealed,
    }


@router.get(
    "", response=list[LabellingOut], summary="List your labellings and those shared with you"
)
def labelling_list(request):
    mine = list(selectors.owned_by(request.user)[:LIST_LIMIT])
    shared = list(selectors.shared_with(request.user)[:LIST_LIMIT])
    return [_labelling_out(labelling, request.user) for labelling in mine + shared]


@router.get("/{labelling_id}", response=LabellingOut, summary="One labelling")
def labelling_read(request, labelling_id: int):
    labelling = selectors.get_labelling_for_user(request.user, labelling_id)
    return _labelling_out(labelling, request.user)


@router.get(
    "/{labelling_id}/cases/{number}",
    response=CaseOut,
    summary="One case: what to judge, your label, and once you gave it what it reveals",
)
def case_read(request, labelling_id: int, number: int):
    labelling = selectors.get_labelling_for_user(request.user, labelling_id)
    case = cases.case_at(labelling, number - 1)
    if case is None:
        raise ApiError(404, "not_found")
    return _case_out(labelling, request.user, case)


@router.put(
    "/{labelling_id}/labels",
    response=CaseOut,
    summary="Label a row (or change its label or note); the answer reveals the metric's score",
)
def label_put(request, labelling_id: int, payload: LabelIn):
    labelling = selectors.get_labelling_for_user(request.user, labelling_id)
    case = cases.case_of_row(labelling, payload.row)
    try:
        services.label_save(
            labelling,
            request.user,
            case,
            value=None if payload.value is None else str(payload.value),
            note=payload.note,
        )
    except services.LabelRefused as refused:
        field = {"no_case": "row", "bad_value": "value"}.get(refused.code, "value")
        raise ApiError(
            422, refused.code, field=field, message=label_refusal(refused.code, labelling)
        ) from None
    return _case_out(labelling, request.user, case)


@router.post(
    "/{labelling_id}/versions",
    response={201: VersionOut, 200: VersionOut},
    summary="Save the labels as a new version of the dataset (the owner's)",
    description="The same rows, with a column of each labeller's labels (human_label or "
    "human_score, human_label_<username> for an invitee) and one of their notes, in the "
    "dataset's own format. 413 storage_quota past your quota, nothing stored; 200 with "
    "reused true for a file you had already.",
)
def version_create(request, labelling_id: int):
    labelling = selectors.get_owned_labelling(request.user, labelling_id)
    try:
        dataset, reused = versions.version_create(labelling)
    except DatasetError as exc:
        raise dataset_refused(exc, field=None) from None
    body = {"dataset": brief_out(dataset), "parent_id": dataset.parent_id, "reused": reused}
    return Status(200 if reused else 201, body)
