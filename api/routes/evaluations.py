"""/api/v1/evaluations: a metric version scoring a dataset's recorded outputs, started
through the playground's own form and services; read, waited for, its cases paged, its
downloads, cancelled."""

from __future__ import annotations

from typing import Literal

from django.http import StreamingHttpResponse
from ninja import Query, Router, Schema, Status

from api.errors import ApiError
from api.evaluation_out import (
    CasePageOut,
    EvaluationBriefOut,
    EvaluationOut,
    case_out,
    evaluation_brief,
    evaluation_out,
)
from api.evaluation_start import EvaluationIn, start_form
from api.forms import cleaned
from api.waiting import WAIT_MAX_S, held
from evaluations import downloads, selectors, services, start
from evaluations.start_views import WAIT_CODES
from metrics import selectors as metric_selectors

router = Router()

MAX_PER_PAGE = 500


class CancelOut(Schema):
    cancelled: bool
    evaluation: EvaluationOut


def _refused(refused: services.EvaluationRefused) -> ApiError:
    """A refusal in the page's words: one that passes with time is a 429, as a check's."""
    waits = refused.code in WAIT_CODES
    return ApiError(
        429 if waits else 422,
        refused.code,
        params=refused.params,
        family="evaluation_refusal",
        headers={"Retry-After": "10"} if waits else None,
    )


def _read(request, evaluation_id: int):
    return selectors.get_evaluation_for_user(request.user, evaluation_id)


# The list holds at most this many, newest first (the evaluations page shows as many).
LIST_LIMIT = 200


@router.get("", response=list[EvaluationBriefOut], summary="List your evaluations, newest first")
def evaluation_list(
    request,
    metric_id: int | None = Query(None, ge=1, description="Only this metric's evaluations."),
    version: int | None = Query(None, ge=1, description="Only its version of this number."),
    dataset_id: int | None = Query(None, ge=1, description="Only those of this dataset."),
):
    found = selectors.evaluations_for_user(request.user).select_related("metric_version")
    if metric_id is not None:
        found = found.filter(metric_version__metric_id=metric_id)
    if version is not None:
        found = found.filter(metric_version__number=version)
    if dataset_id is not None:
        found = found.filter(dataset_id=dataset_id)
    return [evaluation_brief(evaluation) for evaluation in found[:LIST_LIMIT]]


@router.post("", response={202: EvaluationOut}, summary="Start an evaluation")
def evaluation_start(request, payload: EvaluationIn):
    metric = metric_selectors.get_metric_for_user(request.user, payload.metric_id)
    # Another user's dataset is none of this user's (404), as on the page.
    dataset = start.get_dataset_for_user(request.user, payload.dataset_id)
    form, names = start_form(payload, metric, dataset)
    cleaned(form, names=names)
    try:
        evaluation = start.evaluation_start_for_metric(request.user, **form.start_values())
    except services.EvaluationRefused as refused:
        raise _refused(refused) from None
    return Status(202, evaluation_out(_read(request, evaluation.pk)))


@router.get("/{evaluation_id}", response=EvaluationOut, summary="Read an evaluation")
def evaluation_detail(request, evaluation_id: int):
    return evaluation_out(_read(request, evaluation_id))


@router.get(
    "/{evaluation_id}/wait",
    response=EvaluationOut,
    summary="Wait for an evaluation to move (answered when it ends or its progress "
    "changes, or after `timeout` seconds)",
)
def evaluation_wait(
    request,
    evaluation_id: int,
    timeout: float = Query(WAIT_MAX_S, ge=0, description="Seconds, at most 30."),
    since: str | None = Query(None, description="The token of the evaluation last read."),
):
    evaluation = _read(request, evaluation_id)
    if not evaluation.is_final:
        token = since or evaluation.live_token
        evaluation = held(
            request,
            timeout,
            evaluation,
            lambda seconds: selectors.wait_for_change(evaluation, token, seconds),
        )
    return evaluation_out(evaluation)


@router.get(
    "/{evaluation_id}/cases", response=CasePageOut, summary="A page of an evaluation's cases"
)
def case_list(
    request,
    evaluation_id: int,
    page: int = Query(1, ge=1, le=10**7),
    per_page: int = Query(selectors.PAGE_SIZE, ge=1, le=MAX_PER_PAGE),
    status: Literal["invalid"] | None = Query(
        None, description="invalid: only the cases that are not valid, as the page's filter."
    ),
    problem: str = Query("", max_length=60, description="Only the cases with this problem."),
    low: float | None = Query(None, alias="min", description="Only scores at least this."),
    high: float | None = Query(None, alias="max", description="Only scores at most this."),
    sort: Literal["index", "score", "total_ms", "gap"] = "index",
    order: Literal["asc", "desc"] = Query("asc", alias="dir"),
):
    evaluation = _read(request, evaluation_id)
    filters = selectors.CaseFilters(
        sort=sort,
        descending=order == "desc",
        invalid=status == "invalid",
        low=low,
        high=high,
        problem=problem,
    )
    found = selectors.case_page(evaluation, filters, page, per_page)
    # A page past the end is empty, as asked, never the last page under another number.
    past_end = page > found.pages
    return {
        "page": page,
        "pages": found.pages,
        "per_page": found.size,
        "count": found.count,
        "cases": [] if past_end else [case_out(case) for case in found.cases],
    }


def _download(request, evaluation_id: int, fmt: str) -> StreamingHttpResponse:
    """Every case, streamed as the page's download is: the same bytes, the same name."""
    evaluation = _read(request, evaluation_id)
    lines = downloads.WRITERS[fmt](selectors.download_rows(evaluation))
    response = StreamingHttpResponse(lines, content_type=downloads.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="evaluation-{evaluation.pk}.{fmt}"'
    return response


@router.get("/{evaluation_id}/download.csv", summary="Every case as CSV")
def download_csv(request, evaluation_id: int):
    return _download(request, evaluation_id, "csv")


@router.get("/{evaluation_id}/download.jsonl", summary="Every case as JSON Lines")
def download_jsonl(request, evaluation_id: int):
    return _download(request, evaluation_id, "jsonl")


@router.post(
    "/{evaluation_id}/cancel", response=CancelOut, summary="Cancel a queued or running evaluation"
)
def evaluation_cancel(request, evaluation_id: int):
    evaluation = _read(request, evaluation_id)
    cancelled = services.evaluation_cancel(evaluation)
    return {"cancelled": cancelled, "evaluation": evaluation_out(_read(request, evaluation_id))}
