"""An evaluation's pages: the list, the live progress and then the results, the table of
cases, one case, the downloads; and the two writes a reader makes from them (cancel,
and a case copied into the playground)."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from evaluations import downloads, presenters, selectors, services, sweeps
from evaluations.human_presenters import human_block
from evaluations.models import Evaluation
from evaluations.verdict import verdict
from jobs import longpoll
from metrics import services as metric_services

# How long a live panel's request may wait for its evaluation to change before it is
# answered anyway (and asks again): a bound on the thread a waiting page holds.
LONG_POLL_S = 20.0


def _live_context(evaluation: Evaluation) -> dict:
    # A queued one says where it stands in the line and why it waits.
    place = (
        selectors.queue_place(evaluation) if evaluation.status == Evaluation.Status.QUEUED else None
    )
    return {
        "evaluation": evaluation,
        "live": presenters.progress(evaluation),
        "failure": presenters.failure_text(evaluation),
        "resumed": presenters.resumed_text(evaluation),
        "queue": presenters.queue_lines(place, settings.EVALUATION_TURN_S) if place else [],
    }


def _page_context(evaluation: Evaluation) -> dict:
    """The live panel's context, and once final the results: from the summary and the
    few cases it names."""
    context = _live_context(evaluation)
    if evaluation.is_final:
        shown = selectors.cases_at(evaluation, presenters.shown_indexes(evaluation.summary))
        context["results"] = presenters.results(evaluation, shown)
        if context["results"] is not None:
            summary = evaluation.summary or {}
            context["results"]["human"] = human_block(evaluation, summary.get("human"), shown)
        failures = (evaluation.summary or {}).get("failures") or []
        first = (failures[0].get("examples") or [None])[0] if failures else None
        context["verdict"] = verdict(evaluation, first_failed=shown.get(first))
    return context


@login_required
@require_GET
def evaluation_list(request: HttpRequest) -> HttpResponse:
    evaluations = [
        sweeps.as_the_sweep_will_leave_it(evaluation)
        for evaluation in selectors.evaluations_for_user(request.user)[:200]
    ]
    return render(request, "evaluations/list.html", {"evaluations": evaluations})


@login_required
@require_GET
def evaluation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """While it runs: the live panel, which asks for itself again (?partial=live&since=
    <token>); the server holds that request until the worker announces a write of the
    row, or LONG_POLL_S pass. Once final: the results, which the last live answer brings
    along in place of the panel."""
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    # One whose worker died reads as the next sweep will end it; the read writes nothing.
    evaluation = sweeps.as_the_sweep_will_leave_it(evaluation)
    if request.htmx and request.GET.get("partial") == "live":
        since = request.GET.get("since")
        ask_again_ms = 0
        if since is not None and not evaluation.is_final:
            with longpoll.turn(request.user.pk) as may_wait:
                if may_wait:
                    evaluation = selectors.wait_for_change(evaluation, since, LONG_POLL_S)
                else:
                    ask_again_ms = longpoll.ASK_AGAIN_MS
        if evaluation.is_final:
            response = render(
                request, "evaluations/detail.html#final_panel", _page_context(evaluation)
            )
            # 286 tells htmx to stop polling; the results replace the live panel.
            return HttpResponseStopPolling(response.content)
        context = {**_live_context(evaluation), "ask_again_ms": ask_again_ms}
        return render(request, "evaluations/detail.html#live_panel", context)
    return render(request, "evaluations/detail.html", _page_context(evaluation))


@login_required
@require_POST
def evaluation_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Stop a queued or running evaluation: a queued one ends now, a running one's worker
    stops within a second and keeps the cases it finished."""
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    services.evaluation_cancel(evaluation)
    if not request.htmx:
        return redirect("evaluations:detail", pk=evaluation.pk)
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    if evaluation.is_final:
        return HttpResponseClientRefresh()
    return render(request, "evaluations/detail.html#live_panel", _live_context(evaluation))


class CaseTableForm(forms.Form):
    """The table's query. A value that does not parse is left out, never an error page:
    a link that was edited by hand still shows the table."""

    sort = forms.ChoiceField(choices=[(key, key) for key in selectors.SORTS], required=False)
    dir = forms.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)
    invalid = forms.BooleanField(required=False)
    # Localized: "0,9" in Spanish; "0.9" reads the same in every language.
    min = forms.FloatField(required=False, localize=True)
    max = forms.FloatField(required=False, localize=True)
    problem = forms.CharField(max_length=60, required=False)
    page = forms.IntegerField(required=False, min_value=1, max_value=10**7)

    def filters(self) -> selectors.CaseFilters:
        self.is_valid()
        data = self.cleaned_data  # only the fields that parsed
        return selectors.CaseFilters(
            sort=data.get("sort") or "index",
            descending=data.get("dir") == "desc",
            invalid=bool(data.get("invalid")),
            low=data.get("min"),
            high=data.get("max"),
            problem=data.get("problem") or "",
        )

    def page_number(self) -> int:
        return self.cleaned_data.get("page") or 1


def _query(filters: selectors.CaseFilters, **changes) -> str:
    """The table's query string for `filters` with `changes`, for its links."""
    values = {
        "sort": filters.sort if filters.sort != "index" else "",
        "dir": "desc" if filters.descending else "",
        "invalid": "1" if filters.invalid else "",
        "min": "" if filters.low is None else repr(filters.low),
        "max": "" if filters.high is None else repr(filters.high),
        "problem": filters.problem,
    }
    values.update({key: str(value) for key, value in changes.items()})
    return urlencode({key: value for key, value in values.items() if value})


@login_required
@require_GET
def case_list(request: HttpRequest, pk: int) -> HttpResponse:
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    form = CaseTableForm(request.GET)
    filters = form.filters()
    page = selectors.case_page(evaluation, filters, form.page_number())
    sorts = []
    for key in selectors.SORTS:
        descending = filters.sort == key and not filters.descending
        sorts.append(
            {
                "key": key,
                "current": filters.sort == key,
                "descending": filters.sort == key and filters.descending,
                "query": _query(filters, sort=key, dir="desc" if descending else "asc"),
            }
        )
    codes = [
        group.get("code")
        for group in (evaluation.summary or {}).get("failures") or ()
        if group.get("code")
    ]
    context = {
        "evaluation": evaluation,
        "page": page,
        "rows": [presenters.case_row(case) for case in page.cases],
        "filters": filters,
        "sorts": {sort["key"]: sort for sort in sorts},
        "codes": list(dict.fromkeys(codes)),
        "previous_query": _query(filters, page=page.number - 1),
        "next_query": _query(filters, page=page.number + 1),
        "low_text": "" if filters.low is None else repr(filters.low),
        "high_text": "" if filters.high is None else repr(filters.high),
    }
    return render(request, "evaluations/cases.html", context)


def _playground_metric(request: HttpRequest, evaluation: Evaluation):
    """The metric a case can be copied into: the evaluation's, when the reader owns it."""
    version = evaluation.metric_version
    if version is None or version.metric.owner_id != request.user.pk:
        return None
    return version.metric


@login_required
@require_GET
def case_detail(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    case = selectors.get_case(evaluation, index)
    context = {
        "evaluation": evaluation,
        "case": presenters.case_page(case),
        "metric": _playground_metric(request, evaluation),
        "slots": range(1, metric_services.SAMPLE_CASES + 1),
    }
    return render(request, "evaluations/case.html", context)


@login_required
@require_POST
def case_to_playground(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """Copy a case ({input, output, expected}) into one of the metric's three sample
    cases and open the playground on it, to edit the metric against the case it got
    wrong."""
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    metric = _playground_metric(request, evaluation)
    if metric is None:
        raise Http404
    case = selectors.get_case(evaluation, index)
    try:
        slot = int(request.POST.get("slot", ""))
    except ValueError:
        return HttpResponseBadRequest()
    if not 1 <= slot <= metric_services.SAMPLE_CASES:
        return HttpResponseBadRequest()
    metric_services.metric_case_put(metric, slot - 1, case.case or {})
    messages.success(
        request,
        _("Case %(case)s is now sample case %(slot)s.") % {"case": case.number, "slot": slot},
    )
    return redirect(f"{reverse('metrics:detail', args=[metric.pk])}#cases-panel")


@login_required
@require_GET
def evaluation_download(request: HttpRequest, pk: int, fmt: str) -> StreamingHttpResponse:
    """Every case as CSV or JSON Lines, streamed: rows leave as the database hands them
    over, 2000 at a time."""
    evaluation = selectors.get_evaluation_for_user(request.user, pk)
    lines = downloads.WRITERS[fmt](selectors.download_rows(evaluation))
    response = StreamingHttpResponse(lines, content_type=downloads.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="evaluation-{evaluation.pk}.{fmt}"'
    return response
