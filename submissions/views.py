"""The submit wizard's pages: drafts, their steps, the dataset upload and the check step.
Submitting a draft and its bundle are the runs app's (runs.views).

Every step is a plain form that works without JavaScript (POST, then redirect); with
htmx the same POST answers with the next step's wizard partial and pushes its URL.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from checks import diagnostics
from checks import services as check_services
from dataset_files import DatasetError
from submissions import presenters, rules, selectors, services, uploads
from submissions.forms import ArtifactForm, DatasetForm, MetricForm, ModelsForm, UploadForm
from submissions.models import FORM_STEPS, STEPS, Draft
from wording import words
from wording.wizard import STEP_TITLES


def _step_url(draft: Draft, step: str) -> str:
    return reverse("submissions:step", args=[draft.pk, step])


def _form_for(draft: Draft, step: str, data=None):
    bound = data if data is not None else draft.unsaved.get(step)
    if step == "artifact":
        initial = {
            "artifact_kind": draft.artifact_kind,
            "artifact_content": draft.artifact_content,
            "program_source": draft.program_source,
        }
        return ArtifactForm(bound, initial=initial)
    if step == "dataset":
        if draft.dataset is None:
            return None
        return DatasetForm(bound, dataset=draft.dataset, initial=DatasetForm.initial_for(draft))
    if step == "metric":
        initial = {
            "metric_mode": draft.metric_mode,
            "metric_version": draft.metric_version_id,
            "inline_source": draft.inline_source,
        }
        form = MetricForm(bound, owner=draft.owner, initial=initial)
        # Problems marked while typing, as in the playground.
        form.fields["inline_source"].widget.attrs["data-diagnostics-url"] = reverse(
            "submissions:diagnostics", args=[draft.pk]
        )
        return form
    if step == "models":
        initial = {
            "task_model": draft.task_model,
            "reflection_model": draft.reflection_model,
            "metric_model": draft.metric_model,
            "engine": draft.engine,
            "budget": draft.budget,
            "budget_usd": draft.budget_usd,
            "minibatch": draft.minibatch,
        }
        return ModelsForm(bound, kind=draft.artifact_kind, initial=initial)
    return None


def _values(step: str, form) -> dict:
    if step == "dataset":
        return form.values()
    data = dict(form.cleaned_data)
    if step == "metric":
        return {
            "metric_mode": data["metric_mode"],
            "metric_version": data.get("metric_version"),
            "inline_source": data.get("inline_source", ""),
        }
    return {name: data[name] for name in form.fields}


def _render_step(
    request, draft, step, form=None, upload=None, status=200, state=None
) -> HttpResponse:
    """The step's page, or its wizard partial for htmx; `state`: the draft's DraftState
    when the view already built it."""
    state = state or rules.DraftState(draft)
    context = presenters.step_context(state, step, form=form, upload=upload or UploadForm())
    if request.htmx and not request.htmx.boosted:
        response = render(request, "submissions/step.html#wizard", context, status=status)
        if status == 200:
            response = push_url(response, _step_url(draft, step))
        return response
    return render(request, "submissions/step.html", context, status=status)


def go_to_step(request: HttpRequest, draft: Draft, step: str) -> HttpResponse:
    """The wizard at `step`: its partial for htmx, else a redirect to its page."""
    if request.htmx:
        # Read again as every view does (rows deferred), not refresh_from_db(), which
        # would load the whole dataset through the relation.
        draft = selectors.get_draft_for_user(request.user, draft.pk)
        return _render_step(request, draft, step, form=_form_for(draft, step))
    return redirect(_step_url(draft, step))


# -- pages ------------------------------------------------------------------------


@login_required
def draft_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        draft = services.draft_create(owner=request.user)
        return redirect(_step_url(draft, "artifact"))
    drafts = selectors.open_drafts_for_user(request.user)
    return render(request, "submissions/drafts.html", {"drafts": drafts})


@login_required
@require_GET
def draft_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """A draft's own link: where the user left off (the first step not yet done)."""
    draft = selectors.get_draft_for_user(request.user, pk)
    if draft.submitted:
        return redirect("runs:detail", pk=draft.run.pk)
    return redirect(_step_url(draft, rules.first_open_step(draft)))


@login_required
def draft_step(request: HttpRequest, pk: int, step: str) -> HttpResponse:
    draft = selectors.get_draft_for_user(request.user, pk)
    if step not in STEPS:
        raise Http404
    if draft.submitted:
        messages.info(request, _("This draft was submitted; here is its run."))
        return redirect("runs:detail", pk=draft.run.pk)
    state = rules.DraftState(draft)
    found = state.problems
    if step not in presenters.reachable(found):
        opened = next(s for s in STEPS if s in found)
        messages.info(
            request,
            _("Finish “%(step)s” first.") % {"step": STEP_TITLES[opened]},
        )
        return go_to_step(request, draft, opened)
    if request.method != "POST":
        return _render_step(request, draft, step, form=_form_for(draft, step), state=state)
    if step not in FORM_STEPS:
        # The check and review steps act through their own URLs (check/run/, submit/).
        return HttpResponseNotAllowed(["GET"])
    action = request.POST.get("action", "next")
    form = _form_for(draft, step, data=request.POST)
    if form is None:  # the dataset step before any upload
        if action == "back":
            return go_to_step(request, draft, "artifact")
        messages.error(request, words("no_dataset", family="step"))
        return _render_step(request, draft, step, status=400)
    if form.is_valid():
        facts = form.facts if step == "dataset" else None
        services.draft_update(draft, step, _values(step, form), facts=facts)
    else:
        # Kept as typed: Back and a later visit show it again, with its errors.
        data = {key: request.POST.get(key) for key in request.POST if key != "csrfmiddlewaretoken"}
        services.draft_keep_unsaved(draft, step, data)
        if action != "back":
            messages.error(request, _("Fix the fields marked below."))
            return _render_step(request, draft, step, form=form, status=400)
    index = STEPS.index(step)
    if action == "back":
        return go_to_step(request, draft, STEPS[max(index - 1, 0)])
    if action == "save":
        messages.success(request, _("Saved."))
        return go_to_step(request, draft, step)
    return go_to_step(request, draft, STEPS[index + 1])


@uploads.size_limited
@login_required
@require_POST
def dataset_upload(request: HttpRequest, pk: int, limit: uploads.SizeLimitHandler) -> HttpResponse:
    draft = selectors.get_draft_for_user(request.user, pk)
    if draft.submitted:
        raise Http404
    upload, refused = uploads.read_upload(request, limit)
    if upload is None:
        return _upload_failed(request, draft, refused)
    if not upload.is_valid():
        return _render_step(
            request, draft, "dataset", form=_form_for(draft, "dataset"), upload=upload, status=400
        )
    file = upload.cleaned_data["file"]
    try:
        services.dataset_upload(draft, filename=file.name or "dataset", data=file.read())
    except DatasetError as exc:
        message = words(
            exc.code, {"row": exc.row, "column": exc.column, **(exc.params or {})}, family="dataset"
        )
        return _upload_failed(request, draft, message)
    messages.success(request, _("Uploaded. Check the preview, then mark the columns."))
    return go_to_step(request, draft, "dataset")


def _upload_failed(request: HttpRequest, draft: Draft, message: str) -> HttpResponse:
    """The file is refused; the draft keeps the dataset it had."""
    upload = UploadForm()
    upload.errors["file"] = upload.error_class([message])
    return _render_step(
        request, draft, "dataset", form=_form_for(draft, "dataset"), upload=upload, status=400
    )


@login_required
@require_POST
def draft_check(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.get_draft_for_user(request.user, pk)
    if draft.submitted:
        raise Http404
    found = rules.DraftState(draft).problems
    if any(step in found for step in FORM_STEPS):
        return go_to_step(request, draft, next(s for s in STEPS if s in found))
    try:
        services.draft_check_start(draft)
    except check_services.CheckRefused as refused:
        messages.error(request, words(refused.code, {"limit": refused.limit}, family="refusal"))
        return _render_step(request, draft, "check", status=429)
    return go_to_step(request, draft, "check")


@login_required
@require_POST
def draft_diagnostics(request: HttpRequest, pk: int) -> JsonResponse:
    """Static diagnostics of an inline metric.py while it is typed; nothing is executed."""
    selectors.get_draft_for_user(request.user, pk)
    return diagnostics.response(request)


@login_required
@require_GET
def draft_gate(request: HttpRequest, pk: int) -> HttpResponse:
    """The check step's gate (the Next button and why it is shut), refreshed when the
    check panel reports a final result."""
    draft = selectors.get_draft_for_user(request.user, pk)
    context = presenters.step_context(rules.DraftState(draft), "check")
    return render(request, "submissions/step.html#gate", context)


@login_required
@require_POST
def draft_delete(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.get_draft_for_user(request.user, pk)
    if services.draft_delete(draft):
        messages.success(request, _("Draft deleted."))
    return redirect("submissions:drafts")
