"""/api/v1/checks: the contract check, started on a saved version or on a metric.py
sent in the body, through the same services as the playground's Run button; read in the
request's language, waited for, cancelled."""

from __future__ import annotations

import datetime
import time

from django.db import transaction
from django.urls import reverse
from ninja import Field, Router, Schema, Status

import wording
from api.errors import ApiError
from api.forms import cleaned
from api.routes.metrics import FILES_ARE, CaseIn, cases_from_jsonl, cases_in, files_in
from api.schemas import BodyIn
from api.waiting import WAIT_MAX_S, held
from checks import fair_share, selectors, services
from checks.models import Check
from jobs.sweeps import as_the_sweep_will_leave_it
from metrics import selectors as metric_selectors
from metrics import services as metric_services
from metrics.forms import EditorForm

router = Router()


class CheckIn(BodyIn):
    metric_id: int | None = Field(None, description="Check a saved version of this metric…")
    version: int | None = Field(None, description="…this version (its latest when omitted).")
    source: str | None = Field(None, description="…or this metric.py, saved nowhere.")
    files: dict[str, str] | None = Field(None, description=f"With source: {FILES_ARE}")
    cases: list[CaseIn] | None = Field(
        None, description="With source: three sample cases (the default ones when omitted)."
    )
    cases_jsonl: str | None = Field(
        None, description="With source: the three cases as a JSON Lines file's text."
    )
    timeout_s: int | None = None
    reflection_model: str | None = None
    metric_model: str | None = None


class WaitingOut(Schema):
    code: str = Field(
        description="own_check_running: the user's other check runs first (one at a "
        "time per user); worker_busy: other checks are ahead of it"
    )
    ahead: int | None = Field(description="The checks ahead of it, for worker_busy.")
    message: str = Field(description="The same in a sentence, in the request's language.")


class CheckOut(Schema):
    id: int
    status: str = Field(description="queued, running, passed or failed")
    final: bool
    passed: bool
    failure: str = Field(description="Why it stopped early: cancelled, worker_lost, …")
    message: str = Field(description="The verdict in a sentence, in the request's language.")
    metric_id: int | None
    version: int | None
    created_at: datetime.datetime
    finished_at: datetime.datetime | None
    url: str = Field(description="The check's own page.")
    result: dict | None = Field(
        description="Stages, cases, hints and notes, each with its code and its message."
    )
    waiting: WaitingOut | None = Field(
        None, description="Why a queued check waits; null once it runs."
    )


class CancelOut(Schema):
    cancelled: bool
    check: CheckOut


def _verdict(check: Check, rendered: dict | None) -> str:
    from django.utils.translation import gettext as _

    if check.status == Check.Status.PASSED:
        return _("Passed")
    if check.status == Check.Status.QUEUED:
        return _("Queued")
    if check.status == Check.Status.RUNNING:
        return _("Running")
    if check.failure == "cancelled":
        return _("You cancelled this check before it finished.")
    if check.failure == "worker_lost":
        return _("The worker running this check was lost. Run the check again.")
    for stage in (rendered or {}).get("stages", []):
        if stage["id"] == (rendered or {}).get("failed_stage"):
            return f"{stage['name']}: {stage['message']}"
    return _("The check stopped before it finished. Run it again.")


def check_out(check: Check) -> dict:
    check = as_the_sweep_will_leave_it(check)
    rendered = wording.render(check.result) if check.result else None
    version = check.metric_version
    return {
        "id": check.pk,
        "status": check.status,
        "final": check.is_final,
        "passed": check.status == Check.Status.PASSED,
        "failure": check.failure or "",
        "message": _verdict(check, rendered),
        "metric_id": version.metric_id if version else None,
        "version": version.number if version else None,
        "created_at": check.created_at,
        "finished_at": check.finished_at,
        "url": reverse("checks:detail", args=[check.pk]),
        "result": rendered,
        "waiting": _waiting(check),
    }


def _waiting(check: Check) -> dict | None:
    found = fair_share.waiting(check)
    if found is None:
        return None
    return {
        "code": found["reason"],
        "ahead": found.get("ahead"),
        "message": wording.words(found["reason"], found, family="waiting"),
    }


def check_refused(refused: services.CheckRefused) -> ApiError:
    """A check the allowances refuse (too many a minute, too many at once): 429."""
    return ApiError(
        429,
        refused.code,
        params={"limit": refused.limit},
        family="refusal",
        headers={"Retry-After": "10"},
    )


@router.post("", response={202: CheckOut}, summary="Start a contract check")
def check_start(request, payload: CheckIn):
    if (payload.metric_id is None) == (payload.source is None):
        raise ApiError(422, "metric_or_source", field="source")
    if payload.files is not None and payload.source is None:
        raise ApiError(422, "files_need_source", field="files")
    try:
        if payload.metric_id is not None:
            metric = metric_selectors.get_metric_for_user(request.user, payload.metric_id)
            version = (
                metric.latest_version
                if payload.version is None
                else metric_selectors.get_version_for_user(request.user, metric.pk, payload.version)
            )
            check = metric_services.check_start_for_metric(metric, version)
        else:
            form = EditorForm(
                {
                    "source": payload.source,
                    # 0 is refused by the form's range, as on the page; only a missing
                    # value takes the default.
                    "timeout_s": 60 if payload.timeout_s is None else payload.timeout_s,
                    "reflection_model": payload.reflection_model or "",
                    "metric_model": payload.metric_model or "",
                }
            )
            data = cleaned(form)
            files = files_in(payload.files, data["source"])
            if payload.cases is not None and payload.cases_jsonl is not None:
                raise ApiError(422, "cases_or_jsonl", field="cases_jsonl")
            cases = cases_in(payload.cases)
            if payload.cases_jsonl is not None:
                cases = cases_from_jsonl(payload.cases_jsonl)
            with transaction.atomic():
                services.check_admit(request.user)
                check = services.check_create(
                    owner=request.user,
                    source=data["source"],
                    files=files,
                    cases=cases,
                    timeout_s=data["timeout_s"],
                    reflection_model=data["reflection_model"],
                    metric_model=data["metric_model"],
                )
    except services.CheckRefused as refused:
        raise check_refused(refused) from None
    return Status(202, check_out(check))


@router.get("/{check_id}", response=CheckOut, summary="Read a check")
def check_detail(request, check_id: int):
    return check_out(selectors.get_check_for_user(request.user, check_id))


@router.get(
    "/{check_id}/wait",
    response=CheckOut,
    summary="Wait for a check to end (answered at its end, or after `timeout` seconds)",
)
def check_wait(request, check_id: int, timeout: float = WAIT_MAX_S):
    check = selectors.get_check_for_user(request.user, check_id)
    if not check.is_final:
        check = held(request, timeout, check, lambda seconds: _until_final(check, seconds))
    return check_out(check)


def _until_final(check: Check, seconds: float) -> Check:
    """The check once final, or as it is after `seconds` (each change wakes the wait)."""
    deadline = time.monotonic() + seconds
    while not check.is_final:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        check = selectors.wait_for_change(check, check.live_token, left)
    return check


@router.post("/{check_id}/cancel", response=CancelOut, summary="Cancel a queued or running check")
def check_cancel(request, check_id: int):
    check = selectors.get_check_for_user(request.user, check_id)
    cancelled = services.check_cancel(check)
    check.refresh_from_db()
    return {"cancelled": cancelled, "check": check_out(check)}
