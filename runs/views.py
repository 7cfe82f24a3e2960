"""A run's pages: the submit that makes one from a draft (the wizard's last step), the
list, the live run page, and its writes (cancel, resume) and downloads (the bundle, the
best candidate, and a draft's bundle before it is submitted).

While a run is queued or running, its page's live part asks for itself again
(?partial=live&since=<token>): the server holds that request until the runs worker
announces a write of the row (jobs.notify, kind "run") or LONG_POLL_S pass, so the page
follows the run without polling on a timer. A run that is no longer live answers with
htmx's "stop polling" (286)."""

from __future__ import annotations

import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from jobs import longpoll
from runs import bundle, presenters, selectors, services, sweeps
from runs.models import Run
from runs.results import best_of
from submissions import presenters as submission_presenters
from submissions import rules
from submissions import selectors as submission_selectors
from submissions.services import SubmitRefused
from submissions.views import go_to_step
from wording import words

# How long a live request may wait for its run to change before it is answered anyway
# (and asks again).
LONG_POLL_S = 20.0


@login_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    runs = [
        presenters.list_row(sweeps.as_the_sweep_will_leave_it(run))
        for run in selectors.runs_for_user(request.user)[:200]
    ]
    return render(request, "runs/runs.html", {"rows": runs})


def _live_context(run: Run) -> dict:
    context = {"run": run}
    context.update(
        presenters.run_page(run, selectors.candidates_of(run), selectors.recent_events(run))
    )
    return context


def _live_partial(request: HttpRequest, run: Run, ask_again_ms: int = 0) -> HttpResponse:
    context = {**_live_context(run), "ask_again_ms": ask_again_ms}
    response = render(request, "runs/run.html#run_live", context)
    if not run.is_live:
        # 286 tells htmx to stop polling; the final part replaces the live one.
        return HttpResponseStopPolling(response.content)
    return response


@login_required
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The run page; with ?partial=live (an htmx request), only its live part, held
    until the run changes when `since` names what the page shows now."""
    run = selectors.get_run_for_user(request.user, pk)
    if request.htmx and request.GET.get("partial") == "live":
        run = sweeps.as_the_sweep_will_leave_it(run)
        since = request.GET.get("since")
        ask_again_ms = 0
        if since is not None and run.is_live:
            with longpoll.turn(request.user.pk) as may_wait:
                if may_wait:
                    run = selectors.wait_for_change(run, since, LONG_POLL_S)
                else:
                    ask_again_ms = longpoll.ASK_AGAIN_MS
        return _live_partial(request, run, ask_again_ms)
    run = sweeps.as_the_sweep_will_leave_it(run)
    context = _live_context(run)
    context.update(
        {
            "config": run.config,
            "check": run.contract_check,
            "budget_usd": presenters.budget_usd(run.config),
        }
    )
    context.update(submission_presenters.config_rows(run.config))
    return render(request, "runs/run.html", context)


def _after_write(request: HttpRequest, pk: int) -> HttpResponse:
    if not request.htmx:
        return redirect("runs:detail", pk=pk)
    run = sweeps.as_the_sweep_will_leave_it(selectors.get_run_for_user(request.user, pk))
    return render(request, "runs/run.html#run_live", _live_context(run))


@login_required
@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Stop a run: a queued or paused one ends now, a running one's worker stops within a
    second. What it found is kept either way."""
    run = selectors.get_run_for_user(request.user, pk)
    services.run_cancel(run)
    return _after_write(request, run.pk)


@login_required
@require_POST
def run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a paused run again; a worker goes on from its last checkpoint."""
    run = selectors.get_run_for_user(request.user, pk)
    services.run_resume(run)
    return _after_write(request, run.pk)


@login_required
@require_GET
def run_bundle(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.get_run_for_user(request.user, pk)
    return FileResponse(
        io.BytesIO(bundle.for_run(run)),
        as_attachment=True,
        filename=f"skynet-run-{run.pk}.zip",
        content_type="application/zip",
    )


@login_required
@require_GET
def run_best(request: HttpRequest, pk: int) -> HttpResponse:
    """The best candidate's text (the result's once the run ended, the best so far
    before), as a text file; 404 while no candidate has been scored."""
    run = selectors.get_run_for_user(request.user, pk)
    text = ((run.result or {}).get("best") or {}).get("text")
    if text is None:
        best = best_of(selectors.candidates_of(run))
        if best is None:
            raise Http404("no candidate yet")
        text = best.text
    return FileResponse(
        io.BytesIO(text.encode("utf-8")),
        as_attachment=True,
        filename=f"skynet-run-{run.pk}-best.txt",
        content_type="text/plain; charset=utf-8",
    )


@login_required
@require_POST
def run_submit(request: HttpRequest, pk: int) -> HttpResponse:
    """Submit draft `pk` as a run: the wizard's review step posts here."""
    draft = submission_selectors.get_draft_for_user(request.user, pk)
    try:
        run = services.run_submit(draft, name=request.POST.get("name", ""))
    except SubmitRefused as refused:
        if refused.code == "already_submitted":
            return redirect("runs:detail", pk=draft.run.pk)
        messages.error(request, words(refused.code, family="step"))
        return go_to_step(request, draft, rules.first_open_step(draft))
    # What was done, not where the run stands: a flash is written once and stays on the
    # page while the run page's live part moves on (queued, running, finished), and a
    # worker may even have ended the run before its page is opened. The live part says
    # where it stands, always as it is now.
    messages.success(request, _("Run submitted."))
    if request.htmx:
        return HttpResponseClientRedirect(reverse("runs:detail", args=[run.pk]))
    return redirect("runs:detail", pk=run.pk)


@login_required
@require_GET
def draft_bundle(request: HttpRequest, pk: int) -> HttpResponse:
    """The bundle draft `pk`'s run would have, before it is submitted."""
    draft = submission_selectors.get_draft_for_user(request.user, pk)
    state = rules.DraftState(draft)
    if state.problems:
        messages.error(request, words("check_required", family="step"))
        return redirect("submissions:step", pk=draft.pk, step=state.first_open_step)
    return FileResponse(
        io.BytesIO(bundle.for_draft(draft)),
        as_attachment=True,
        filename=f"skynet-draft-{draft.pk}.zip",
        content_type="application/zip",
    )
