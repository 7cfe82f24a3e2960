"""The labelling pages: the list (mine and shared with me), starting one from a dataset or
an evaluation, the case page (one case at a time; a label is a POST that answers the next
case), inviting another account and saving a new dataset version (the owner's).

Every view gets its labelling through labelling.selectors: to anyone but its owner and
its invitees it does not exist (404), and the owner's pages are 404 to an invitee too."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import push_url

from dataset_files import DatasetError
from evaluations import selectors as evaluation_selectors
from labelling import agreement, cases, presenters, selectors, services, versions
from labelling.forms import InviteForm, LabelForm, StartForm, default_columns
from labelling.models import Labelling
from labelling.words import label_refusal
from submissions import storage
from submissions.models import Dataset
from wording import words

# --- the list and starting one --------------------------------------------------

# A dataset's file and rows are most of its bytes (its rows alone take a third of a second
# to decode at 200,000): the start page reads its columns only.
LIGHT = ("raw", "rows", "row_numbers", "preview")


def _with_progress(labellings, user):
    return labellings.annotate(mine=Count("labels", filter=Q(labels__labeller=user)))


@login_required
@require_GET
def labelling_list(request: HttpRequest) -> HttpResponse:
    context = {
        "owned": _with_progress(selectors.owned_by(request.user), request.user)[:200],
        "shared": _with_progress(selectors.shared_with(request.user), request.user)[:200],
    }
    return render(request, "labelling/list.html", context)


def _start(request: HttpRequest, dataset: Dataset, evaluation=None) -> HttpResponse:
    columns = list(dataset.columns)
    initial = {**default_columns(columns, evaluation), "kind": "pass_fail", "scale": 5}
    refusal = ""
    if evaluation is not None and not evaluation.is_final:
        refusal = _("This evaluation has not ended: label its cases once it has.")
    form = StartForm(
        request.POST if request.method == "POST" else None, columns=columns, initial=initial
    )
    if request.method == "POST" and not refusal and form.is_valid():
        data = form.cleaned_data
        try:
            labelling = services.labelling_create(
                owner=request.user,
                dataset=dataset,
                evaluation=evaluation,
                kind=data["kind"],
                scale=data["scale"],
                input_columns=data["input_columns"],
                output_column=data["output_column"],
                expected_column=data["expected_column"],
            )
        except storage.QuotaExceeded as exc:
            # Its copy of the cases would take the owner past their storage quota.
            form.add_error(None, words(exc.code, exc.params, family="dataset"))
        else:
            return redirect("labelling:detail", pk=labelling.pk)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "dataset": dataset, "evaluation": evaluation, "refusal": refusal}
    return render(request, "labelling/start.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def labelling_start(request: HttpRequest, pk: int) -> HttpResponse:
    """Label a dataset's rows: the form, and making the labelling."""
    dataset = get_object_or_404(Dataset.objects.defer(*LIGHT), pk=pk, owner=request.user)
    return _start(request, dataset)


@login_required
@require_http_methods(["GET", "POST"])
def labelling_start_from_evaluation(request: HttpRequest, pk: int) -> HttpResponse:
    """Label the rows an evaluation scored; each case's score shows once labelled."""
    evaluation = evaluation_selectors.get_evaluation_for_user(request.user, pk)
    dataset = Dataset.objects.defer(*LIGHT).get(pk=evaluation.dataset_id)
    return _start(request, dataset, evaluation)


# --- the case page ------------------------------------------------------------------


def _case_or_404(labelling: Labelling, number: int) -> cases.Case:
    case = cases.case_at(labelling, number - 1)
    if case is None:
        raise Http404
    return case


def _panel(request, labelling: Labelling, case: cases.Case, **extra) -> dict:
    """The case panel's context: the one fragment the full page and each answer render."""
    count = selectors.labelled_count(labelling, request.user)
    return {
        "labelling": labelling,
        "view": presenters.case_view(labelling, request.user, case),
        "buttons": presenters.buttons(labelling),
        "labelled": count,
        "percent": round(100 * count / labelling.total) if labelling.total else 0,
        **extra,
    }


def _page(request, labelling: Labelling, case: cases.Case, *, status=200, **extra):
    context = _panel(request, labelling, case, **extra)
    context["kind_text"] = presenters.kind_text(labelling)
    context["agreement"] = presenters.agreement_rows(agreement.pairs(labelling, request.user))
    if labelling.is_owner:
        context["invite_form"] = extra.get("invite_form") or InviteForm(labelling=labelling)
        context["invitations"] = selectors.invitations(labelling)
    return render(request, "labelling/case.html", context, status=status)


def _just(request, labelling: Labelling, number: str | None) -> dict | None:
    """The case labelled just before (?after=<number>): its label and what it reveals."""
    try:
        case = cases.case_at(labelling, int(number or 0) - 1)
    except ValueError:
        return None
    if case is None:
        return None
    view = presenters.case_view(labelling, request.user, case)
    return view if view["label"] is not None else None


@login_required
@require_GET
def labelling_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The page at the first case the user has not labelled."""
    labelling = selectors.get_labelling_for_user(request.user, pk)
    if labelling.total == 0:
        return render(request, "labelling/case.html", {"labelling": labelling, "view": None})
    case = _case_or_404(labelling, selectors.first_unlabelled(labelling, request.user) + 1)
    return _page(request, labelling, case)


@login_required
@require_GET
def labelling_case(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """One case; an htmx request (an arrow key) gets the case panel alone."""
    labelling = selectors.get_labelling_for_user(request.user, pk)
    case = _case_or_404(labelling, number)
    just = _just(request, labelling, request.GET.get("after"))
    if request.htmx:
        context = _panel(request, labelling, case, just=just)
        return render(request, "labelling/case.html#case_panel", context)
    return _page(request, labelling, case, just=just)


@login_required
@require_POST
def label_save(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """Save the user's label of the case (and its note), then show the next case with this
    one's label and what it reveals; a note alone stays on the case."""
    labelling = selectors.get_labelling_for_user(request.user, pk)
    case = _case_or_404(labelling, number)
    form = LabelForm(request.POST, labelling=labelling)
    error = ""
    if form.is_valid():
        value = form.cleaned_data["value"]
        note = form.cleaned_data["note"] if "note" in request.POST else None
        try:
            services.label_save(labelling, request.user, case, value=value, note=note)
        except services.LabelRefused as refused:
            error = label_refusal(refused.code, labelling)
    else:
        error = label_refusal("bad_value", labelling) if "value" in form.errors else ""
        error = error or " ".join(m for messages_ in form.errors.values() for m in messages_)
    if error:
        if request.htmx:
            context = _panel(request, labelling, case, error=error)
            return render(request, "labelling/case.html#case_panel", context, status=400)
        return _page(request, labelling, case, error=error, status=400)
    moved = bool(form.cleaned_data["value"]) and case.position + 1 < labelling.total
    shown = cases.case_at(labelling, case.position + 1) if moved else case
    url = reverse("labelling:case", args=[labelling.pk, shown.number])
    if not request.htmx:
        return redirect(f"{url}?after={case.number}" if moved else url)
    just = presenters.case_view(labelling, request.user, case) if moved else None
    saved = "" if moved else _("Saved.")
    context = _panel(request, labelling, shown, just=just, saved=saved)
    return push_url(render(request, "labelling/case.html#case_panel", context), url)


# --- the owner's: inviting, a new dataset version ---------------------------------------


@login_required
@require_POST
def invite(request: HttpRequest, pk: int) -> HttpResponse:
    labelling = selectors.get_owned_labelling(request.user, pk)
    form = InviteForm(request.POST, labelling=labelling)
    if form.is_valid():
        try:
            services.invitation_create(labelling, form.invitee)
        except services.InviteRefused:
            form.add_error("username", _("This account is invited already."))
        else:
            messages.success(
                request,
                _("%(name)s can now label these cases.") % {"name": form.invitee.get_username()},
            )
            return redirect("labelling:detail", pk=labelling.pk)
    case = cases.case_at(labelling, selectors.first_unlabelled(labelling, request.user))
    if case is None:
        raise Http404
    return _page(request, labelling, case, invite_form=form, status=400)


@login_required
@require_POST
def version(request: HttpRequest, pk: int) -> HttpResponse:
    labelling = selectors.get_owned_labelling(request.user, pk)
    try:
        dataset, before = versions.version_create(labelling)
    except DatasetError as refused:
        messages.error(request, words(refused.code, refused.params, family="dataset"))
        return redirect("labelling:detail", pk=labelling.pk)
    if before:
        text = _("These labels were saved before, as %(name)s.")
    else:
        text = _("Saved as a new dataset, %(name)s.")
    messages.success(request, text % {"name": dataset.filename})
    return redirect("submissions:datasets")
