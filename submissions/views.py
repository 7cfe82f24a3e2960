"""The submit wizard, the runs list and the run page.

Every step is a plain form that works without JavaScript (POST, then redirect); with
htmx the same POST answers with the next step's wizard partial and pushes its URL.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

import dataset_files
from dataset_files import DatasetError
from metrics_app import check_text, diagnostics, presenters
from metrics_app import services as metric_services
from submissions import bundle, services, text
from submissions.forms import ArtifactForm, DatasetForm, MetricForm, ModelsForm, UploadForm
from submissions.models import STEPS, Draft, Run

DRAIN_LIMIT = 256 * 1024 * 1024
FORM_STEPS = ("artifact", "dataset", "metric", "models")


def _draft(request: HttpRequest, pk: int) -> Draft:
    """The user's draft, or 404: another user's draft does not exist for them."""
    return get_object_or_404(
        Draft.objects.select_related("dataset", "contract_check", "metric_version__metric")
        # Every row is read only where it is needed, not for each page.
        .defer("dataset__raw", "dataset__rows", "dataset__row_numbers"),
        pk=pk,
        owner=request.user,
    )


def _step_url(draft: Draft, step: str) -> str:
    return reverse("draft_step", args=[draft.pk, step])


def _reachable(draft: Draft, found: dict) -> set[str]:
    """Steps the user may open: every step up to and including the first incomplete one."""
    reachable = set()
    for step in STEPS:
        reachable.add(step)
        if step in found:
            break
    return reachable


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
            "draft_diagnostics", args=[draft.pk]
        )
        return form
    if step == "models":
        initial = {
            "task_model": draft.task_model,
            "reflection_model": draft.reflection_model,
            "metric_model": draft.metric_model,
            "engine": draft.engine,
            "budget": draft.budget,
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


def _preview(draft: Draft) -> dict | None:
    dataset = draft.dataset
    if dataset is None:
        return None
    return {
        "dataset": dataset,
        "columns": dataset.columns,
        "rows": [
            [dataset_files.safe_cell(row.get(column)) for column in dataset.columns]
            for row in dataset.preview
        ],
        "total": dataset.row_count,
        "warnings": [text.warning_message(w) for w in dataset.warnings],
    }


def _split_counts(draft: Draft, found: dict) -> list | None:
    facts = services.dataset_facts(draft)
    if facts is None or "dataset" in found:
        return None
    return [(text.SPLIT_NAMES[name], count) for name, count in facts["counts"].items()]


def _context(request: HttpRequest, draft: Draft, step: str, form=None, upload=None) -> dict:
    found = services.problems(draft)
    reachable = _reachable(draft, found)
    steps = []
    done = True  # a step counts as done only when every step before it is done too
    for index, step_id in enumerate(STEPS):
        done = done and step_id not in found and step_id != "review"
        steps.append(
            {
                "id": step_id,
                "number": index + 1,
                "title": text.STEP_TITLES[step_id],
                "done": done,
                "current": step_id == step,
                "reachable": step_id in reachable,
            }
        )
    index = STEPS.index(step)
    context = {
        "draft": draft,
        "step": step,
        "steps": steps,
        "step_title": text.STEP_TITLES[step],
        "previous": STEPS[index - 1] if index else None,
        "form": form,
        "problems": {k: text.problem_message(p.code, p.params) for k, p in found.items()},
        "check_state": services.check_state(draft),
    }
    if step == "dataset":
        context["upload"] = upload or UploadForm()
        context["preview"] = _preview(draft)
        context["max_bytes"] = dataset_files.MAX_BYTES
        context["counts"] = _split_counts(draft, found)
    if step in ("check", "review"):
        context["check"] = draft.contract_check
        context["rendered"] = (
            presenters.present(draft.contract_check) if draft.contract_check else None
        )
        context["reference_rows"] = check_text.reference_rows()
        context["gate_open"] = not found
        context["blocking"] = [
            (text.STEP_TITLES[s], found[s]) for s in STEPS if s in found and s != "check"
        ]
        if not any(s in found for s in FORM_STEPS):
            context["sample_rows"] = services.dataset_facts(draft)["sample_rows"]
    if step == "review" and not found:
        context["summary"] = services.run_config(draft)
        context["engine_name"] = text.ENGINE_NAMES[context["summary"]["engine"]["resolved"]]
        context["role_rows"] = [
            (column, text.ROLE_NAMES[role])
            for column, role in context["summary"]["dataset"]["columns"].items()
        ]
        context["split_rows"] = [
            (text.SPLIT_NAMES[name], count)
            for name, count in context["summary"]["dataset"]["splits"]["counts"].items()
        ]
    return context


def _render_step(request, draft, step, form=None, upload=None, status=200) -> HttpResponse:
    context = _context(request, draft, step, form, upload)
    if request.htmx and not request.htmx.boosted:
        response = render(request, "submissions/step.html#wizard", context, status=status)
        if status == 200:
            response = push_url(response, _step_url(draft, step))
        return response
    return render(request, "submissions/step.html", context, status=status)


def _go(request: HttpRequest, draft: Draft, step: str) -> HttpResponse:
    if request.htmx:
        draft.refresh_from_db()
        return _render_step(request, draft, step, form=_form_for(draft, step))
    return redirect(_step_url(draft, step))


# -- pages ------------------------------------------------------------------------


@login_required
def draft_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        draft = services.draft_create(owner=request.user)
        return redirect(_step_url(draft, "artifact"))
    drafts = Draft.objects.filter(owner=request.user, run__isnull=True)
    return render(request, "submissions/drafts.html", {"drafts": drafts})


@login_required
@require_GET
def draft_resume(request: HttpRequest, pk: int) -> HttpResponse:
    """A draft's own link: where the user left off (the first step not yet done)."""
    draft = _draft(request, pk)
    if draft.submitted:
        return redirect("run_detail", pk=draft.run.pk)
    return redirect(_step_url(draft, services.first_open_step(draft)))


@login_required
def draft_step(request: HttpRequest, pk: int, step: str) -> HttpResponse:
    draft = _draft(request, pk)
    if step not in STEPS:
        raise Http404
    if draft.submitted:
        messages.info(request, _("This draft was submitted; here is its run."))
        return redirect("run_detail", pk=draft.run.pk)
    found = services.problems(draft)
    if step not in _reachable(draft, found):
        opened = next(s for s in STEPS if s in found)
        messages.info(
            request,
            _("Finish “%(step)s” first.") % {"step": text.STEP_TITLES[opened]},
        )
        return _go(request, draft, opened)
    if request.method != "POST":
        return _render_step(request, draft, step, form=_form_for(draft, step))
    if step not in FORM_STEPS:
        return HttpResponse(status=405)
    action = request.POST.get("action", "next")
    form = _form_for(draft, step, data=request.POST)
    if form is None:  # the dataset step before any upload
        if action == "back":
            return _go(request, draft, "artifact")
        messages.error(request, text.problem_message("no_dataset"))
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
        return _go(request, draft, STEPS[max(index - 1, 0)])
    if action == "save":
        messages.success(request, _("Saved."))
        return _go(request, draft, step)
    return _go(request, draft, STEPS[index + 1])


@login_required
@require_POST
def dataset_upload(request: HttpRequest, pk: int) -> HttpResponse:
    draft = _draft(request, pk)
    if draft.submitted:
        raise Http404
    try:
        # An upload far over the limit is refused before its body is read.
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > dataset_files.MAX_BYTES + 64 * 1024:
        _drain(request, length)
        return _upload_failed(
            request,
            draft,
            text.dataset_message(
                "too_large", params={"size": length, "limit": dataset_files.MAX_BYTES}
            ),
        )
    try:
        upload = UploadForm(request.POST, request.FILES)
        valid = upload.is_valid()
    except RequestDataTooBig:
        return _upload_failed(request, draft, _("The upload is too large."))
    if not valid:
        return _render_step(
            request, draft, "dataset", form=_form_for(draft, "dataset"), upload=upload, status=400
        )
    file = upload.cleaned_data["file"]
    if file.size > dataset_files.MAX_BYTES:
        message = text.dataset_message(
            "too_large", params={"size": file.size, "limit": dataset_files.MAX_BYTES}
        )
        return _upload_failed(request, draft, message)
    try:
        services.dataset_upload(draft, filename=file.name or "dataset", data=file.read())
    except DatasetError as exc:
        message = text.dataset_message(exc.code, row=exc.row, column=exc.column, params=exc.params)
        return _upload_failed(request, draft, message)
    messages.success(request, _("Uploaded. Check the preview, then mark the columns."))
    return _go(request, draft, "dataset")


def _drain(request: HttpRequest, length: int) -> None:
    """Read and drop a refused body (up to a bound), so the browser gets the answer
    rather than a reset connection; nothing of it is kept."""
    remaining = min(length, DRAIN_LIMIT)
    while remaining > 0:
        chunk = request.read(min(remaining, 1024 * 1024))
        if not chunk:
            break
        remaining -= len(chunk)


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
    draft = _draft(request, pk)
    if draft.submitted:
        raise Http404
    found = services.problems(draft)
    if any(step in found for step in FORM_STEPS):
        return _go(request, draft, next(s for s in STEPS if s in found))
    try:
        services.draft_check_start(draft, language=get_language())
    except metric_services.CheckRefused as refused:
        messages.error(request, check_text.refusal_message(refused.code, refused.limit))
        return _render_step(request, draft, "check", status=429)
    return _go(request, draft, "check")


@login_required
@require_POST
def draft_diagnostics(request: HttpRequest, pk: int) -> JsonResponse:
    """Static diagnostics of an inline metric.py while it is typed; nothing is executed."""
    _draft(request, pk)
    source = request.POST.get("source", "")
    return JsonResponse({"diagnostics": diagnostics.static_diagnostics(source)})


@login_required
@require_GET
def draft_gate(request: HttpRequest, pk: int) -> HttpResponse:
    """The check step's gate (the Next button and why it is shut), refreshed when the
    check panel reports a final result."""
    draft = _draft(request, pk)
    context = _context(request, draft, "check")
    return render(request, "submissions/step.html#gate", context)


@login_required
@require_POST
def draft_submit(request: HttpRequest, pk: int) -> HttpResponse:
    draft = _draft(request, pk)
    try:
        run = services.run_submit(draft, name=request.POST.get("name", ""))
    except services.SubmitRefused as refused:
        if refused.code == "already_submitted":
            return redirect("run_detail", pk=draft.run.pk)
        messages.error(request, text.problem_message(refused.code))
        return _go(request, draft, services.first_open_step(draft))
    messages.success(request, _("Run submitted. It is queued."))
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("run_detail", args=[run.pk])
        return response
    return redirect("run_detail", pk=run.pk)


@login_required
@require_POST
def draft_delete(request: HttpRequest, pk: int) -> HttpResponse:
    draft = _draft(request, pk)
    if not draft.submitted:
        draft.delete()
        messages.success(request, _("Draft deleted."))
    return redirect("draft_list")


@login_required
@require_GET
def draft_bundle(request: HttpRequest, pk: int) -> HttpResponse:
    draft = _draft(request, pk)
    if services.problems(draft):
        messages.error(request, text.problem_message("check_required"))
        return redirect(_step_url(draft, services.first_open_step(draft)))
    data = bundle.build(
        config=services.run_config(draft),
        metric_source=services.metric_source(draft) or "",
        dataset=draft.dataset,
        check=draft.contract_check,
    )
    return _zip(data, f"skynet-draft-{draft.pk}.zip")


@login_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    runs = Run.objects.filter(owner=request.user).select_related("dataset")
    return render(request, "submissions/runs.html", {"runs": runs})


def _run(request: HttpRequest, pk: int) -> Run:
    return get_object_or_404(
        Run.objects.select_related("dataset", "contract_check"), pk=pk, owner=request.user
    )


@login_required
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(request, pk)
    config = run.config
    context = {
        "run": run,
        "config": config,
        "engine_name": text.ENGINE_NAMES.get(config["engine"]["resolved"], ""),
        "role_rows": [
            (column, text.ROLE_NAMES.get(role, role))
            for column, role in config["dataset"]["columns"].items()
        ],
        "split_rows": [
            (text.SPLIT_NAMES[name], count)
            for name, count in config["dataset"]["splits"]["counts"].items()
        ],
        "check": run.contract_check,
    }
    return render(request, "submissions/run.html", context)


@login_required
@require_GET
def run_bundle(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(request, pk)
    data = bundle.build(
        config=run.config,
        metric_source=run.metric_source,
        dataset=run.dataset,
        check=run.contract_check,
    )
    return _zip(data, f"skynet-run-{run.pk}.zip")


def _zip(data: bytes, filename: str) -> HttpResponse:
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
