"""A check's own page and the live panel's requests; a case's feedback review."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling, trigger_client_event

from checks import presenters, selectors, services
from checks.forms import PICKER_FORMS
from jobs import longpoll
from jobs.sweeps import as_the_sweep_will_leave_it
from wording import reference_rows, words

# How long a live panel's request may wait for its check to change before it is answered
# anyway (and asks again).
LONG_POLL_S = 20.0


@login_required
@require_GET
def check_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One check's result: its own page, and the partial that live updates poll."""
    check = selectors.get_check_for_user(request.user, pk)
    since = request.GET.get("since")
    ask_again_ms = 0
    if request.htmx and since is not None and check.waits_for_news:
        with longpoll.turn(request.user.pk) as may_wait:
            if may_wait:
                check = selectors.wait_for_change(check, since, LONG_POLL_S)
            else:
                ask_again_ms = longpoll.ASK_AGAIN_MS
    # A check whose worker died shows as the next sweep will end it (and the live panel
    # stops), without this read writing the row.
    check = as_the_sweep_will_leave_it(check)
    metric = check.metric_version.metric if check.metric_version else None
    context = {
        "check": check,
        "rendered": presenters.present(check),
        "metric": metric,
        "reference_rows": reference_rows(),
        "ask_again_ms": ask_again_ms,
        # The playground's panel asks for its history table too (?history=1), which the
        # final live update refreshes out of band; the wizard's and the check's own page
        # have no such table.
        "history": (
            selectors.history_of(metric) if metric and request.GET.get("history") else None
        ),
    }
    if request.htmx and request.GET.get("partial") == "panel":
        response = render(request, "checks/check.html#check_panel", context)
        if check.is_final:
            # 286 tells htmx to stop polling; the final panel replaces the live one.
            stop = HttpResponseStopPolling(response.content)
            # The submit wizard's gate listens for this to open or stay shut.
            return trigger_client_event(stop, "skynet:check-final", {"check": check.pk})
        return response
    return render(request, "checks/check.html", context)


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
            "checks/_review.html",
            {
                "check": check,
                "index": index,
                "refusal": words(refused.code, family="review_refusal"),
            },
        )
    except services.CheckRefused as refused:
        message = words(refused.code, {"limit": refused.limit}, family="refusal")
        return render(
            request,
            "checks/_review.html",
            {"check": check, "index": index, "refusal": message},
        )
    if not request.htmx:
        return redirect(f"{reverse('checks:detail', args=[check.pk])}#case-{index + 1}")
    return render(
        request, "checks/_review.html", {"check": check, "index": index, "review": review}
    )


@login_required
@require_GET
def review_detail(request: HttpRequest, pk: int, review_pk: int) -> HttpResponse:
    review = selectors.get_review_for_user(request.user, pk, review_pk)
    context = {"check": review.contract_check, "index": review.case_index, "review": review}
    response = render(request, "checks/_review.html", context)
    if review.is_final:
        return HttpResponseStopPolling(response.content)
    return response


@login_required
@require_POST
def check_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Stop a queued or running check. The live panel hears when it has ended (the worker
    kills a running check's sandbox within a second); the button says it is stopping."""
    check = selectors.get_check_for_user(request.user, pk)
    services.check_cancel(check)
    if request.htmx:
        return render(request, "checks/_cancel.html", {"check": check, "stopping": True})
    return redirect("checks:detail", pk=check.pk)


@login_required
@require_POST
def models_test_again(request: HttpRequest) -> HttpResponse:
    """Test every configured model's endpoint again, now, and answer with the note beside
    the pickers and the pickers themselves (swapped in out of band), the choices posted
    still chosen."""
    form_class = PICKER_FORMS.get(request.POST.get("form", ""))
    if form_class is None:
        return HttpResponseBadRequest()
    initial = {name: request.POST.get(name, "") for name in form_class.MODEL_FIELDS}
    form = form_class.for_pickers(initial, fresh_models=True)
    oob = [form[name].as_widget(attrs={"hx-swap-oob": "outerHTML"}) for name in form.MODEL_FIELDS]
    return render(
        request, "checks/_model_reach.html", {"pickers": form, "tested": True, "oob": oob}
    )
