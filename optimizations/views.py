"""A run's pages: the list, the live run page, and its writes (cancel, resume) and
downloads (the bundle, the best candidate)."""

from __future__ import annotations

import io

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from optimizations import presenters, services, sweeps
from submissions import bundle, selectors
from submissions import presenters as submission_presenters


@login_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    runs = [
        sweeps.as_the_sweep_will_leave_it(run)
        for run in selectors.runs_for_user(request.user)[:200]
    ]
    return render(request, "submissions/runs.html", {"runs": runs})


@login_required
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = sweeps.as_the_sweep_will_leave_it(selectors.get_run_for_user(request.user, pk))
    context = {"run": run, "config": run.config, "check": run.contract_check}
    context.update(submission_presenters.config_rows(run.config))
    context.update(presenters.run_page(run))
    return render(request, "submissions/run.html", context)


@login_required
@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.get_run_for_user(request.user, pk)
    services.run_cancel(run)
    return redirect("run_detail", pk=run.pk)


@login_required
@require_POST
def run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.get_run_for_user(request.user, pk)
    services.run_resume(run)
    return redirect("run_detail", pk=run.pk)


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
