"""Starting an evaluation: from the playground (a dataset of recorded outputs, chosen or
uploaded here) and from a wizard draft (its artifact, dataset and metric as they are).

Plain forms that work without JavaScript. The playground's form has two steps: choosing
a dataset is a GET (it only reads), its columns and options are the POST that starts;
a POST that does not validate shows the same form again with what was typed.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

import dataset_files
from dataset_files import DatasetError
from evaluations import start
from evaluations.models import Evaluation
from evaluations.services import EvaluationRefused
from evaluations.start_forms import (
    DatasetChoiceForm,
    DraftEvaluateForm,
    MetricEvaluateForm,
    chosen_repeats,
    chosen_scorings,
)
from metrics import selectors as metric_selectors
from submissions import rules, selectors, services, uploads
from submissions.forms import UploadForm
from submissions.models import FORM_STEPS
from wording import words
from wording.wizard import STEP_TITLES

TEMPLATE = "evaluations/start.html"
# Refusals that pass with time (429, as a check's); the others are this request's own.
WAIT_CODES = ("too_many_active", "rate_limited")


def _refused(form, refused: EvaluationRefused) -> int:
    """Put the refusal on the form, in the reader's words; the status to answer with."""
    form.add_error(None, words(refused.code, refused.params, family="evaluation_refusal"))
    return 429 if refused.code in WAIT_CODES else 400


def _started(evaluation) -> HttpResponse:
    return redirect(reverse("evaluations:detail", args=[evaluation.pk]))


# -- the playground ---------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def metric_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    metric = metric_selectors.get_metric_for_user(request.user, pk)
    if request.method == "POST":
        # The dataset comes first: the form's fields are its columns. Another user's
        # dataset is none of this user's (404), never read.
        dataset = start.get_dataset_for_user(request.user, request.POST.get("dataset"))
        form = MetricEvaluateForm(request.POST, metric=metric, dataset=dataset)
        status = 400
        if form.is_valid():
            try:
                evaluation = start.evaluation_start_for_metric(request.user, **form.start_values())
            except EvaluationRefused as refused:
                status = _refused(form, refused)
            else:
                return _started(evaluation)
        return _metric_page(request, metric, dataset=dataset, form=form, status=status)
    dataset = None
    if request.GET.get("dataset"):
        dataset = start.get_dataset_for_user(request.user, request.GET["dataset"])
    form = MetricEvaluateForm(metric=metric, dataset=dataset) if dataset else None
    return _metric_page(request, metric, dataset=dataset, form=form)


def _metric_page(
    request: HttpRequest, metric, *, dataset=None, form=None, upload=None, status: int = 200
) -> HttpResponse:
    chooser = DatasetChoiceForm(
        owner=request.user, initial={"dataset": dataset.pk} if dataset else None
    )
    context = {
        "source": "metric",
        "metric": metric,
        "dataset": dataset,
        "form": form,
        "chooser": chooser,
        "has_datasets": chooser.fields["dataset"].queryset.exists(),
        "upload": upload or UploadForm(),
        "max_bytes": dataset_files.MAX_BYTES,
    }
    if form is not None:
        context["preview_rows"] = start.preview_rows(dataset, form.chosen_types())
        version = _chosen_version(form) or metric.latest_version
        cost = start.metric_cost(version, chosen_scorings(form)) if version else None
        context["cost"] = _cost_note(form, dataset, cost)
    return render(request, TEMPLATE, context, status=status)


def _chosen_version(form):
    return getattr(form, "cleaned_data", {}).get("version")


def _cost_note(form, dataset, per_case: float | None) -> dict | None:
    """The projection for the rows chosen: those the bound form counted, else the first
    values' (the rows an unbound form starts with)."""
    total = form.total
    if total is None and not form.is_bound:
        try:
            total = len(start.selected_rows(dataset, form.initial_selection()))
        except DatasetError:
            total = None
    return start.cost_note(total, per_case, chosen_scorings(form)) if total else None


@uploads.size_limited
@login_required
@require_POST
def metric_evaluate_upload(
    request: HttpRequest, pk: int, limit: uploads.SizeLimitHandler
) -> HttpResponse:
    metric = metric_selectors.get_metric_for_user(request.user, pk)
    upload, refused = uploads.read_upload(request, limit)
    if upload is None:
        return _upload_failed(request, metric, refused)
    if not upload.is_valid():
        return _metric_page(request, metric, upload=upload, status=400)
    file = upload.cleaned_data["file"]
    try:
        dataset = services.dataset_create(
            owner=request.user, filename=file.name or "dataset", data=file.read()
        )
    except DatasetError as exc:
        message = words(
            exc.code, {"row": exc.row, "column": exc.column, **(exc.params or {})}, family="dataset"
        )
        return _upload_failed(request, metric, message)
    messages.success(request, _("Uploaded. Mark the columns, then start the evaluation."))
    return redirect(f"{reverse('evaluations:start', args=[metric.pk])}?dataset={dataset.pk}")


def _upload_failed(request: HttpRequest, metric, message: str) -> HttpResponse:
    upload = UploadForm()
    upload.errors["file"] = upload.error_class([message])
    return _metric_page(request, metric, upload=upload, status=400)


# -- a draft ----------------------------------------------------------------------


def _asked(request: HttpRequest) -> dict:
    """What a link asks the form to start with (the wizard's "evaluate it with each case
    scored several times": ?second=repeat&repeats=3); anything else is left out."""
    asked: dict = {}
    if request.GET.get("second") == Evaluation.Second.REPEAT:
        asked["second"] = Evaluation.Second.REPEAT
        if request.GET.get("repeats", "") in {"2", "3", "4", "5"}:
            asked["repeats"] = int(request.GET["repeats"])
    return asked


@login_required
@require_http_methods(["GET", "POST"])
def draft_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.get_draft_for_user(request.user, pk)
    state = rules.DraftState(draft)
    found = state.problems
    missing = [
        {
            "step": step,
            "title": STEP_TITLES[step],
            "problem": words(found[step].code, found[step].params, family="step"),
        }
        for step in FORM_STEPS
        if step in found
    ]
    context = {"source": "draft", "draft": draft, "missing": missing}
    if missing:
        return render(request, TEMPLATE, context, status=400 if request.method == "POST" else 200)
    counts = state.facts["counts"]
    form = DraftEvaluateForm(
        request.POST or None, draft=draft, counts=counts, initial=_asked(request)
    )
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                evaluation = start.evaluation_start_for_draft(
                    draft,
                    selection=form.selection,
                    total=form.total,
                    second=form.cleaned_data.get("second") or "",
                    repeats=chosen_repeats(form),
                )
            except EvaluationRefused as refused:
                status = _refused(form, refused)
            else:
                return _started(evaluation)
    context["form"] = form
    per_case = start.draft_cost(draft, chosen_scorings(form))
    context["cost"] = _cost_note(form, draft.dataset, per_case)
    context["latest_evaluation"] = start.latest_evaluation(draft)
    return render(request, TEMPLATE, context, status=status)
