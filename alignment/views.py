"""The alignment pages: what aligning an evaluation's judge will do, with its Start
button (which makes the run's draft and sends the user to its check step), and the run
page's Accept (which saves the best prompt as a new version and evaluates it).

Every view gets its evaluation or run through the owning app's selector: another user's
is a 404, and so is a run that is no alignment's."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from alignment import plans, presenters, selectors, services
from alignment.forms import StartForm
from alignment.words import refusal_words
from evaluations import selectors as evaluation_selectors
from runs import selectors as run_selectors
from wording import words


@login_required
@require_http_methods(["GET", "POST"])
def alignment_start(request: HttpRequest, pk: int) -> HttpResponse:
    """What aligning the evaluation's judge will do; POST starts it."""
    evaluation = evaluation_selectors.get_evaluation_for_user(request.user, pk)
    try:
        plan = plans.plan_for(evaluation)
    except plans.NotAlignable as refused:
        context = {"evaluation": evaluation, "refusal": refusal_words(refused.code, refused.params)}
        return render(
            request,
            "alignment/start.html",
            context,
            status=422 if request.method == "POST" else 200,
        )
    form = StartForm(request.POST if request.method == "POST" else None)
    context = {"evaluation": evaluation, "form": form, **presenters.start_page(plan)}
    if request.method == "POST" and form.is_valid():
        try:
            alignment, check_refused = services.alignment_start(
                plan, budget=form.cleaned_data["budget"]
            )
        except services.AlignRefused as refused:
            context["refusal"] = refusal_words(refused.code, refused.params)
            return render(request, "alignment/start.html", context, status=422)
        if check_refused is not None:
            params = {"limit": check_refused.limit}
            messages.error(request, words(check_refused.code, params, family="refusal"))
        else:
            messages.success(
                request,
                _(
                    "The run's draft is ready and its contract check has started. Once it "
                    "passes, go on to the review step and submit the run."
                ),
            )
        return redirect("submissions:step", pk=alignment.draft_id, step="check")
    status = 400 if request.method == "POST" else 200
    return render(request, "alignment/start.html", context, status=status)


@login_required
@require_POST
def alignment_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the run's best prompt as a new version of the judge, and compare the two
    versions on the held-out rows: the comparison's page is the answer."""
    run = run_selectors.get_run_for_user(request.user, pk)
    alignment = selectors.get_alignment_for_run(request.user, run)
    if alignment.accepted_at is not None and alignment.comparison_id is not None:
        messages.error(request, refusal_words("already_accepted"))
        return redirect("evaluations:detail", pk=alignment.comparison_id)
    try:
        evaluation = services.alignment_accept(alignment, run, request.user)
    except services.AlignRefused as refused:
        messages.error(request, refusal_words(refused.code, refused.params))
        return redirect("runs:detail", pk=run.pk)
    messages.success(
        request,
        _(
            "Saved as version %(number)s of %(metric)s. This evaluation compares it with "
            "the version it started from on the held-out rows."
        )
        % {
            "number": alignment.accepted_version.number,
            "metric": alignment.seed_version.metric.name,
        },
    )
    return redirect("evaluations:detail", pk=evaluation.pk)
