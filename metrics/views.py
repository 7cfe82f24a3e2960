"""Pages and partials. Each view parses with a form, calls one service, renders one template."""

from __future__ import annotations

import json
import sys

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget, trigger_client_event

from checks import diagnostics, presenters
from checks import selectors as check_selectors
from checks import services as check_services
from contract import files as helper_files
from contract.local_modules import Imports
from contract.static import calls_llm
from metrics import code_display, selectors, services, uploads
from metrics.forms import EditorForm, HelperFiles, MetricCreateForm, case_forms
from sandbox.libraries import AVAILABLE
from wording import reference_rows, words
from wording.files import upload_words


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "metrics/home.html", {"metrics": None})
    return render(
        request,
        "metrics/home.html",
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
        return redirect("metrics:detail", pk=metric.pk)
    return render(request, "metrics/metric_new.html", {"form": form, "example": initial})


def _playground_context(metric, editor, cases, check=None, helpers=None) -> dict:
    if helpers is None:
        latest = metric.latest_version
        helpers = HelperFiles(files=latest.helper_files if latest else {})
    return {
        "metric": metric,
        "editor": editor,
        "cases": cases,
        "helpers": helpers,
        "max_files": helper_files.MAX_FILES,
        "check": check,
        "rendered": presenters.present(check),
        "history": check_selectors.history_of(metric),
        "versions": metric.versions.all()[:10],
        "latest": metric.latest_version,
        "completions_json": json.dumps(diagnostics.completions()),
        "reference_rows": reference_rows(),
    }


@login_required
def metric_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The playground: editor, cases, the latest check and the history."""
    metric = selectors.get_metric_for_user(request.user, pk)
    latest = metric.latest_version
    check = None
    if request.GET.get("check"):
        try:
            check = check_selectors.get_check_for_user(request.user, int(request.GET["check"]))
        except ValueError:
            raise Http404 from None
        # ?check= names a check of this metric; any other (another metric's, a wizard's)
        # is not this page's to show.
        if check.metric_version is None or check.metric_version.metric_id != metric.pk:
            raise Http404
    else:
        check = check_selectors.checks_for_metric(metric, limit=1).first()
    editor = EditorForm(
        initial={
            "source": latest.source if latest else "",
            "timeout_s": metric.timeout_s,
            "reflection_model": metric.reflection_model,
            "metric_model": metric.metric_model,
        }
    )
    context = _playground_context(metric, editor, case_forms(cases=metric.cases), check)
    return render(request, "metrics/playground.html", context)


@login_required
@require_POST
def metric_save(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the editor (a new version when the text changed); with action=run, also check it."""
    metric = selectors.get_metric_for_user(request.user, pk)
    editor = EditorForm(request.POST)
    cases = case_forms(request.POST)
    helpers = HelperFiles(request.POST)
    valid = [editor.is_valid()] + [form.is_valid() for form in cases]  # every field's errors
    valid.append(helpers.is_valid((editor.cleaned_data or {}).get("source") or ""))
    if not all(valid):
        context = _playground_context(metric, editor, cases, helpers=helpers)
        if request.htmx:
            messages.error(request, _("Nothing was saved: fix the fields marked below."))
            response = render(request, "metrics/playground.html#editor_form", context, status=400)
            return reswap(retarget(response, "#editor-form"), "outerHTML")
        return render(request, "metrics/playground.html", context, status=400)
    version, created = services.metric_save(
        metric,
        source=editor.cleaned_data["source"],
        cases=[form.to_case() for form in cases],
        timeout_s=editor.cleaned_data["timeout_s"],
        reflection_model=editor.cleaned_data["reflection_model"],
        metric_model=editor.cleaned_data["metric_model"],
        files=helpers.files,
    )
    running = request.POST.get("action") == "run"
    if created:
        messages.success(request, _("Saved as version %(number)s.") % {"number": version.number})
    elif not running:  # a Run says which version it checks next to the button
        messages.info(
            request, _("No changes since version %(number)s.") % {"number": version.number}
        )
    if not running:
        if request.htmx:
            response = render(
                request,
                "metrics/playground.html#save_status",
                {"metric": metric, "latest": version},
            )
            return trigger_client_event(response, "skynet:saved", {"version": version.number})
        return redirect("metrics:detail", pk=metric.pk)
    chosen = editor.cleaned_data["reflection_model"] or editor.cleaned_data["metric_model"]
    if not chosen and calls_llm(version.source):
        return _pick_a_model_first(request, metric)
    try:
        check = services.check_start_for_metric(metric, version)
    except check_services.CheckRefused as refused:
        messages.error(request, words(refused.code, {"limit": refused.limit}, family="refusal"))
        if request.htmx:
            response = render(request, "_messages.html", {}, status=429)
            return reswap(retarget(response, "#messages"), "outerHTML")
        return redirect("metrics:detail", pk=metric.pk)
    if request.htmx:
        context = {
            "metric": metric,
            "check": check,
            "rendered": None,
            "latest": version,
            "history": check_selectors.history_of(metric),
        }
        response = render(request, "metrics/playground.html#check_panel", context)
        return trigger_client_event(response, "skynet:saved", {"version": version.number})
    return redirect(f"{reverse('metrics:detail', args=[metric.pk])}?check={check.pk}#check")


def _pick_a_model_first(request: HttpRequest, metric) -> HttpResponse:
    """A Run of a metric that calls llm() with no model to answer it: it is saved, not
    checked, and the user is sent to the pickers rather than to a check whose every case
    fails with "no metric model"."""
    messages.error(
        request,
        format_html(
            '{} <a href="#models">{}</a>',
            _(
                "This metric calls llm(), but no model is selected to answer it. "
                "Pick a reflection model or a metric model first, then run the check."
            ),
            _("Go to the model pickers"),
        ),
    )
    if request.htmx:
        response = render(request, "_messages.html", {}, status=400)
        return reswap(retarget(response, "#messages"), "outerHTML")
    return redirect(f"{reverse('metrics:detail', args=[metric.pk])}#models")


@login_required
@require_GET
def version_list(request: HttpRequest, pk: int) -> HttpResponse:
    metric = selectors.get_metric_for_user(request.user, pk)
    return render(
        request,
        "metrics/versions.html",
        {
            "metric": metric,
            "versions": selectors.versions_with_verdicts(metric).prefetch_related("labels"),
        },
    )


@login_required
@require_GET
def version_detail(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    version = selectors.get_version_for_user(request.user, pk, number)
    context = {
        "metric": version.metric,
        "version": version,
        "lines": code_display.highlighted_lines(version.source),
        "helper_files": [
            (path, code_display.highlighted_lines(text))
            for path, text in version.helper_files.items()
        ],
        "verdict": check_selectors.checks_for_version(version).first(),
    }
    return render(request, "metrics/version.html", context)


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
    return render(
        request,
        "metrics/diff.html",
        {"metric": metric, "a": a, "b": b, "rows": code_display.side_by_side(a.source, b.source)},
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
    return redirect("metrics:detail", pk=version.metric.pk)


@login_required
@require_POST
def metric_diagnostics(request: HttpRequest, pk: int) -> JsonResponse:
    """Static diagnostics while typing: load, signature and REWARD_SPEC, nothing executed.
    An import of the metric's own module is said as one (local_module_missing) unless it
    is among the helper files: the latest version's, and any `path` the request names."""
    metric = selectors.get_metric_for_user(request.user, pk)
    source = request.POST.get("source", "")
    found = diagnostics.static_diagnostics(source)
    if not any(item["code"] == "module_not_available" for item in found):
        return JsonResponse({"diagnostics": found})
    latest = metric.latest_version
    paths = list(latest.helper_files) if latest else []
    paths += [p for p in request.POST.getlist("path") if helper_files.path_problem(p) is None]
    return JsonResponse({"diagnostics": _local_modules(found, source, paths)})


def _local_modules(found: list[dict], source: str, paths: list[str]) -> list[dict]:
    """The diagnostics with each module_not_available of a metric's own module dropped
    when its file is among `paths`, else said as local_module_missing."""
    imports = Imports.of(source, paths)
    known = helper_files.modules(paths)
    flagged: dict[int, list[str]] = {}
    kept = []
    for item in found:
        if item["code"] != "module_not_available":
            kept.append(item)
            continue
        line = item["line"]
        if line not in flagged:
            # The modules of the statement the editor flagged, in its order (one mark each).
            flagged[line] = [
                module
                for module, level in imports.by_line.get(line, [])
                if level == 0 and module and not _importable(module)
            ]
        module = flagged[line].pop(0) if flagged[line] else ""
        if not module or not imports.is_local(module):
            kept.append(item)
        elif module not in known:
            params = {"module": module, "line": line}
            message = words("local_module_missing", params)
            kept.append({**item, "code": "local_module_missing", "message": message})
    return kept


def _importable(module: str) -> bool:
    """What the editor's own diagnostics never flag: stdlib, skynet, the sandbox's."""
    top = module.split(".")[0]
    return top in sys.stdlib_module_names or top == "skynet" or top in AVAILABLE


@login_required
@require_POST
def metric_add_imports(request: HttpRequest, pk: int) -> JsonResponse:
    """The panel's one-click fix: the posted metric.py with the import line of every
    name it uses but never imports. Nothing is saved; the editor takes the text."""
    selectors.get_metric_for_user(request.user, pk)
    return diagnostics.add_imports_response(request)


@login_required
@require_POST
def metric_files_upload(request: HttpRequest, pk: int) -> JsonResponse:
    """A folder's files (`file`, each with its `path` in the folder; `other_path`: the
    folder's files the browser did not send) or a .zip (`archive`), made helper files:
    {"files": [{"path", "text"}], "message", "errors"}. Nothing is saved: the editor adds
    a tab for each, and the next save keeps them. Past a limit, nothing is added (400)."""
    selectors.get_metric_for_user(request.user, pk)
    archive = request.FILES.get("archive")
    if archive is not None:
        if archive.size > uploads.MAX_UPLOAD_BYTES:
            params = {"size": archive.size, "limit": uploads.MAX_UPLOAD_BYTES}
            upload = uploads.Upload(problems=[helper_files.Problem("upload_too_large", params)])
        else:
            upload = uploads.from_zip(archive.read())
    else:
        sent = request.FILES.getlist("file")
        paths = request.POST.getlist("path")
        total = sum(item.size for item in sent)
        if total > uploads.MAX_UPLOAD_BYTES:
            params = {"size": total, "limit": uploads.MAX_UPLOAD_BYTES}
            upload = uploads.Upload(problems=[helper_files.Problem("upload_too_large", params)])
        else:
            named = [
                (paths[index] if index < len(paths) else item.name, item.read())
                for index, item in enumerate(sent)
            ]
            upload = uploads.from_files(named, request.POST.getlist("other_path")[:200])
    errors = [words(p.code, p.params, family="files") for p in upload.problems]
    answer = {
        "files": [] if errors else [{"path": p, "text": t} for p, t in upload.files.items()],
        "message": upload_words(
            list(upload.files) if not errors else [], upload.ignored, upload.metric
        ),
        "errors": errors,
    }
    return JsonResponse(answer, status=400 if errors else 200)
