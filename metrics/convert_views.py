"""Convert to the contract: a metric written for DSPy or gepa, rewritten, reviewed as a
diff, and saved only when the user accepts it (then the check runs on it)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from checks import services as check_services
from metrics import selectors, services
from metrics.conversion import digest, review
from metrics.forms import MetricImportForm
from wording import words


@login_required
@require_http_methods(["GET", "POST"])
def metric_convert(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the latest version (or ?version=N) converted, as a diff to review. POST:
    accept it; the conversion is made again here from that version, never taken from
    the request, so what is saved is what the page showed."""
    metric = selectors.get_metric_for_user(request.user, pk)
    number = request.POST.get("version") or request.GET.get("version")
    version = (
        selectors.get_version_for_user(request.user, pk, _number(number))
        if number
        else metric.latest_version
    )
    if version is None:
        return redirect("metrics:detail", pk=metric.pk)
    # Where several functions could be the metric, the one the reader picked.
    chosen = request.POST.get("metric") or request.GET.get("metric") or None
    found = review(version.source, request.user, chosen)
    if request.method == "GET" or found.converted is None or not found.changed:
        return render(
            request, "metrics/convert.html", {"metric": metric, "version": version, "review": found}
        )
    saved = services.metric_convert(metric, version, found.converted)
    messages.success(
        request,
        _("Converted version %(old)s to the contract; saved as version %(new)s.")
        % {"old": version.number, "new": saved.number},
    )
    try:
        check = services.check_start_for_metric(metric, saved)
    except check_services.CheckRefused as refused:
        messages.error(request, words(refused.code, {"limit": refused.limit}, family="refusal"))
        return redirect("metrics:detail", pk=metric.pk)
    return redirect(f"{reverse('metrics:detail', args=[metric.pk])}?check={check.pk}#check")


def _number(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise Http404 from None


@login_required
@require_http_methods(["GET", "POST"])
def metric_import(request: HttpRequest) -> HttpResponse:
    """ "Start from a DSPy or gepa metric": paste it, review its conversion, create it."""
    form = MetricImportForm(request.POST or None)
    found = None
    if request.method == "POST" and form.is_valid():
        source = form.cleaned_data["source"]
        found = review(source, request.user, request.POST.get("metric") or None)
        # Create only what was reviewed: a source edited after its review is shown again.
        reviewed = request.POST.get("reviewed") == digest(source)
        if request.POST.get("action") == "create" and not reviewed:
            messages.info(request, _("The metric changed since its review: review it again."))
        elif request.POST.get("action") == "create" and found.converted is not None:
            metric = services.metric_import(
                owner=request.user,
                name=form.cleaned_data["name"],
                source=form.cleaned_data["source"],
                converted=found.converted,
            )
            if found.changed:
                messages.success(
                    request,
                    _(
                        "Version 1 is your metric as you pasted it and version 2 its "
                        "conversion. Set the sample cases to your data's columns, then run "
                        "the contract check."
                    ),
                )
            return redirect("metrics:detail", pk=metric.pk)
    reviewed_digest = digest(form.cleaned_data["source"]) if found is not None else ""
    return render(
        request,
        "metrics/import.html",
        {"form": form, "review": found, "reviewed": reviewed_digest},
    )
