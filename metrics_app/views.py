"""Pages and partials. Each view parses with a form, calls one service, renders one template."""

from __future__ import annotations

import difflib
import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling, reswap, retarget, trigger_client_event

from metrics_app import check_text, diagnostics, presenters, selectors, services
from metrics_app.forms import EditorForm, MetricCreateForm, case_forms


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "metrics_app/home.html", {"metrics": None})
    return render(
        request,
        "metrics_app/home.html",
        {"metrics": selectors.metrics_for_user(request.user), "form": MetricCreateForm()},
    )


@login_required
def metric_create(request: HttpRequest) -> HttpResponse:
    initial = {}
    if request.GET.get("example"):
        initial = {
            "name": _("Example from the docs"),
            "example": request.GET["example"],
            "example_language": get_language(),
        }
    form = MetricCreateForm(request.POST or None, initial=initial)
    if initial or request.POST.get("example"):
        # The example brings its own code; its cases follow from it.
        form.fields["starter"].widget = forms.HiddenInput()
    if request.method == "POST" and form.is_valid():
        metric = services.metric_create(
            owner=request.user,
            name=form.cleaned_data["name"],
            starter=form.cleaned_data["starter"],
            source=form.cleaned_data.get("example_source"),
        )
        return redirect("metric_detail", pk=metric.pk)
    return render(request, "metrics_app/metric_new.html", {"form": form, "example": initial})


def _playground_context(metric, editor, cases, check=None) -> dict:
    return {
        "metric": metric,
        "editor": editor,
        "cases": cases,
        "check": check,
        "rendered": presenters.present(check),
        "history": selectors.checks_for_metric(metric),
        "versions": metric.versions.all()[:10],
        "latest": metric.latest_version,
        "completions_json": json.dumps(diagnostics.completions()),
        "reference_rows": check_text.reference_rows(),
    }


@login_required
def metric_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The playground: editor, cases, the latest check and the history."""
    metric = selectors.get_metric_for_user(request.user, pk)
    latest = metric.latest_version
    check = None
    if request.GET.get("check"):
        try:
            check = selectors.get_check_for_user(request.user, int(request.GET["check"]))
        except ValueError:
            raise Http404 from None
        # ?check= names a check of this metric; any other (another metric's, a wizard's)
        # is not this page's to show.
        if check.metric_version is None or check.metric_version.metric_id != metric.pk:
            raise Http404
    else:
        check = selectors.checks_for_metric(metric, limit=1).first()
    editor = EditorForm(
        initial={
            "source": latest.source if latest else "",
            "timeout_s": metric.timeout_s,
            "reflection_model": metric.reflection_model,
            "metric_model": metric.metric_model,
        }
    )
    context = _playground_context(metric, editor, case_forms(cases=metric.cases), check)
    return render(request, "metrics_app/playground.html", context)


@login_required
@require_POST
def metric_save(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the editor (a new version when the text changed); with action=run, also check it."""
    metric = selectors.get_metric_for_user(request.user, pk)
    editor = EditorForm(request.POST)
    cases = case_forms(request.POST)
    valid = [editor.is_valid()] + [form.is_valid() for form in cases]  # every field's errors
    if not all(valid):
        context = _playground_context(metric, editor, cases)
        if request.htmx:
            messages.error(request, _("Nothing was saved: fix the fields marked below."))
            response = render(
                request, "metrics_app/playground.html#editor_form", context, status=400
            )
            return reswap(retarget(response, "#editor-form"), "outerHTML")
        return render(request, "metrics_app/playground.html", context, status=400)
    version, created = services.metric_save(
        metric,
        source=editor.cleaned_data["source"],
        cases=[form.to_case() for form in cases],
        timeout_s=editor.cleaned_data["timeout_s"],
        reflection_model=editor.cleaned_data["reflection_model"],
        metric_model=editor.cleaned_data["metric_model"],
    )
    if created:
        messages.success(request, _("Saved as version %(number)s.") % {"number": version.number})
    else:
        messages.info(
            request, _("No changes since version %(number)s.") % {"number": version.number}
        )
    if request.POST.get("action") != "run":
        if request.htmx:
            response = render(
                request,
                "metrics_app/playground.html#save_status",
                {"metric": metric, "latest": version},
            )
            return trigger_client_event(response, "skynet:saved", {"version": version.number})
        return redirect("metric_detail", pk=metric.pk)
    try:
        check = services.check_start_for_metric(metric, version, language=get_language())
    except services.CheckRefused as refused:
        messages.error(request, check_text.refusal_message(refused.code, refused.limit))
        if request.htmx:
            response = render(request, "metrics_app/_messages.html", {}, status=429)
            return reswap(retarget(response, "#messages"), "outerHTML")
        return redirect("metric_detail", pk=metric.pk)
    if request.htmx:
        context = {
            "metric": metric,
            "check": check,
            "rendered": None,
            "latest": version,
            "history": selectors.checks_for_metric(metric),
        }
        response = render(request, "metrics_app/playground.html#check_panel", context)
        return trigger_client_event(response, "skynet:saved", {"version": version.number})
    return redirect(f"{reverse('metric_detail', args=[metric.pk])}?check={check.pk}#check")


# How long a live panel's request may wait for its check to change before it is answered
# anyway (and asks again).
LONG_POLL_S = 20.0


@login_required
@require_GET
def check_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One check's result: its own page, and the partial that live updates poll."""
    check = selectors.get_check_for_user(request.user, pk)
    # The page itself ends a check whose worker died, so a lone dead worker cannot
    # leave it "running" forever.
    if check.status == check.Status.RUNNING and services.checks_reap_stale(pk=check.pk):
        check.refresh_from_db()
    since = request.GET.get("since")
    if request.htmx and since is not None and check.waits_for_news:
        check = selectors.wait_for_change(check, since, LONG_POLL_S)
    metric = check.metric_version.metric if check.metric_version else None
    context = {
        "check": check,
        "rendered": presenters.present(check),
        "metric": metric,
        "reference_rows": check_text.reference_rows(),
        # The final live update also refreshes the playground's history table.
        "history": selectors.checks_for_metric(metric) if metric else None,
    }
    if request.htmx and request.GET.get("partial") == "panel":
        response = render(request, "metrics_app/check.html#check_panel", context)
        if check.is_final:
            # 286 tells htmx to stop polling; the final panel replaces the live one.
            stop = HttpResponseStopPolling(response.content)
            # The submit wizard's gate listens for this to open or stay shut.
            return trigger_client_event(stop, "skynet:check-final", {"check": check.pk})
        return response
    return render(request, "metrics_app/check.html", context)


@login_required
@require_GET
def version_list(request: HttpRequest, pk: int) -> HttpResponse:
    metric = selectors.get_metric_for_user(request.user, pk)
    return render(
        request,
        "metrics_app/versions.html",
        {"metric": metric, "versions": metric.versions.all()},
    )


@login_required
@require_GET
def version_detail(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    version = selectors.get_version_for_user(request.user, pk, number)
    return render(
        request,
        "metrics_app/version.html",
        {"metric": version.metric, "version": version},
    )


@login_required
@require_GET
def version_diff(request: HttpRequest, pk: int) -> HttpResponse:
    metric = selectors.get_metric_for_user(request.user, pk)
    try:
        a_number = int(request.GET.get("a", ""))
        b_number = int(request.GET.get("b", ""))
    except ValueError:
        latest = metric.latest_version
        if latest is None:
            raise Http404 from None
        a_number, b_number = max(latest.number - 1, 1), latest.number
    a = selectors.get_version_for_user(request.user, pk, a_number)
    b = selectors.get_version_for_user(request.user, pk, b_number)
    lines = list(
        difflib.unified_diff(
            a.source.splitlines(),
            b.source.splitlines(),
            fromfile=f"metric.py v{a.number}",
            tofile=f"metric.py v{b.number}",
            lineterm="",
        )
    )
    return render(
        request,
        "metrics_app/diff.html",
        {"metric": metric, "a": a, "b": b, "lines": lines, "versions": metric.versions.all()},
    )


@login_required
@require_POST
def version_restore(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    version = selectors.get_version_for_user(request.user, pk, number)
    restored = services.metric_restore(version.metric, version)
    messages.success(
        request,
        _("Version %(old)s restored as version %(new)s.")
        % {"old": version.number, "new": restored.number},
    )
    return redirect("metric_detail", pk=version.metric.pk)


@login_required
@require_POST
def metric_diagnostics(request: HttpRequest, pk: int) -> JsonResponse:
    """Static diagnostics while typing: load, signature and REWARD_SPEC, nothing executed."""
    selectors.get_metric_for_user(request.user, pk)
    return diagnostics.response(request)


@login_required
@require_POST
def review_create(request: HttpRequest, pk: int, index: int) -> HttpResponse:
    """Ask the reflection model whether a case's feedback is useful (runs in the worker)."""
    check = selectors.get_check_for_user(request.user, pk)
    try:
        review = services.review_request(check, index, language=get_language())
    except services.ReviewRefused as refused:
        return render(
            request,
            "metrics_app/_review.html",
            {"check": check, "index": index, "refusal": check_text.review_refusal(refused.code)},
        )
    except services.CheckRefused as refused:
        message = check_text.refusal_message(refused.code, refused.limit)
        return render(
            request,
            "metrics_app/_review.html",
            {"check": check, "index": index, "refusal": message},
        )
    if not request.htmx:
        return redirect(f"{reverse('check_detail', args=[check.pk])}#case-{index + 1}")
    return render(
        request, "metrics_app/_review.html", {"check": check, "index": index, "review": review}
    )


@login_required
@require_GET
def review_detail(request: HttpRequest, pk: int, review_pk: int) -> HttpResponse:
    review = selectors.get_review_for_user(request.user, pk, review_pk)
    context = {"check": review.contract_check, "index": review.case_index, "review": review}
    response = render(request, "metrics_app/_review.html", context)
    if review.is_final:
        return HttpResponseStopPolling(response.content)
    return response
