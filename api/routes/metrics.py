"""/api/v1/metrics: a user's metrics and their immutable numbered versions."""

from __future__ import annotations

import datetime

from django.db import transaction
from ninja import Field, Router, Schema, Status

from api.errors import ApiError
from api.forms import cleaned
from api.schemas import BodyIn
from contract import files as helper_files
from contract import missing_imports
from contract.cases import CasesError, case_from_dict, parse_cases_jsonl
from metrics import selectors, services
from metrics.conversion import conversion_of
from metrics.forms import EditorForm, MetricCreateForm
from metrics.models import Metric, MetricVersion
from wording.contract import imports_added_words
from wording.convert import convert_error_words, note_words

router = Router()


class CaseIn(BodyIn):
    input: dict
    output: object = None
    expected: dict | None = None
    observation: dict | None = None


class MetricIn(BodyIn):
    name: str = Field(max_length=120)
    starter: str = Field(
        "exact_match", description="A starter's key; ignored when source is given."
    )
    source: str | None = Field(None, description="metric.py; version 1 of the new metric.")


# What `files` is, in the schema: the helper modules and their limits (contract.files).
FILES_ARE = (
    'Helper modules beside metric.py that it imports, {path: text} (e.g. {"src/evaluation.py":'
    f' "..."}}): at most {helper_files.MAX_FILES} .py files of '
    f"{helper_files.MAX_FILE_BYTES // 1024} KB each, {helper_files.MAX_TOTAL_BYTES // 1024} KB "
    "with metric.py, at their paths in the repository."
)


class VersionIn(BodyIn):
    source: str
    files: dict[str, str] | None = Field(
        None,
        description=f"{FILES_ARE} Omitted: the latest version's files are kept; {{}} for none.",
    )
    labels: list[str] = Field(
        default_factory=list,
        description="Names for this version (a commit, a branch): each moves here from "
        "another version of the metric that had it.",
    )
    cases: list[CaseIn] | None = Field(None, description="The three sample cases the check runs.")
    timeout_s: int | None = None
    reflection_model: str | None = None
    metric_model: str | None = None


class VersionOut(Schema):
    number: int
    created_at: datetime.datetime
    verdict: str | None = Field(None, description="The status of its latest check.")
    labels: list[str] = Field(default_factory=list, description="The names it carries.")


class VersionSourceOut(Schema):
    number: int
    created_at: datetime.datetime
    source: str
    files: dict[str, str] = Field(
        default_factory=dict, description="Its helper modules beside metric.py, {path: text}."
    )
    labels: list[str] = Field(default_factory=list, description="The names it carries.")
    created: bool | None = Field(None, description="On a save: whether this save made it.")


class MetricOut(Schema):
    id: int
    name: str
    latest_version: int | None
    latest_check_status: str | None = None
    reflection_model: str
    metric_model: str
    timeout_s: int
    cases: list[dict]
    created_at: datetime.datetime
    updated_at: datetime.datetime


def metric_out(metric: Metric, status: str | None = None) -> dict:
    latest = metric.latest_version
    return {
        "id": metric.pk,
        "name": metric.name,
        "latest_version": latest.number if latest else None,
        "latest_check_status": status,
        "reflection_model": metric.reflection_model,
        "metric_model": metric.metric_model,
        "timeout_s": metric.timeout_s,
        "cases": metric.cases or [],
        "created_at": metric.created_at,
        "updated_at": metric.updated_at,
    }


def version_out(version: MetricVersion, created: bool | None = None) -> dict:
    return {
        "number": version.number,
        "created_at": version.created_at,
        "source": version.source,
        "files": version.helper_files,
        "labels": list(version.labels.values_list("name", flat=True)),
        "created": created,
    }


def cases_in(cases: list[CaseIn] | None, field: str = "cases") -> list[dict] | None:
    """The sample cases as the check stores them, each refused as the cases file is."""
    if cases is None:
        return None
    if len(cases) != 3:
        raise ApiError(
            422,
            "wrong_count",
            params={"count": len(cases), "expected": 3},
            family="cases",
            field=field,
        )
    stored = []
    for index, case in enumerate(cases):
        try:
            stored.append(case_from_dict(case.dict()).to_job())
        except CasesError as error:
            raise ApiError(
                422, error.code, params=error.params, family="cases", field=f"{field}.{index}"
            ) from None
    return stored


def cases_from_jsonl(text: str, field: str = "cases_jsonl") -> list[dict]:
    """A cases file's text, refused as the check_metric command refuses it (with its line)."""
    try:
        return [case.to_job() for case in parse_cases_jsonl(text)]
    except CasesError as error:
        params = {**error.params, "line": error.line}
        raise ApiError(422, error.code, params=params, family="cases", field=field) from None


def files_in(files: dict[str, str] | None, source: str, field: str = "files") -> dict | None:
    """Helper files as the playground takes them (contract.files' limits), or ApiError(422)
    with the first problem's code and the page's words; None stays None."""
    if files is None:
        return None
    try:
        return helper_files.clean(files, metric_source=source)
    except helper_files.FilesRefused as refused:
        raise ApiError(
            422, refused.code, params=refused.params, family="files", field=field
        ) from None


def source_in(source: str) -> str:
    """metric.py as the editor takes it (its size limit, its line ends)."""
    form = EditorForm(
        {"source": source, "timeout_s": 60, "reflection_model": "", "metric_model": ""}
    )
    form.is_valid()
    if "source" in form.errors:
        cleaned(form)
    return form.cleaned_data["source"]


@router.get("", response=list[MetricOut], summary="List your metrics")
def metric_list(request):
    return [metric_out(m, m.latest_check_status) for m in selectors.metrics_for_user(request.user)]


@router.post("", response={201: MetricOut}, summary="Create a metric")
def metric_create(request, payload: MetricIn):
    data = cleaned(MetricCreateForm({"name": payload.name, "starter": payload.starter}))
    source = None if payload.source is None else source_in(payload.source)
    metric = services.metric_create(
        owner=request.user, name=data["name"], starter=data["starter"], source=source
    )
    return Status(201, metric_out(metric))


class SourceIn(BodyIn):
    source: str


class ImportsAddedOut(Schema):
    source: str = Field(description="metric.py with the import lines added.")
    added: list[str] = Field(description="The import lines added, as written.")
    line: int = Field(description="The line the first added import is on; 0 when none was.")
    missing: list[str] = Field(
        description="Names still used but never imported: no import is known for them."
    )
    message: str


@router.post(
    "/add-imports",
    response=ImportsAddedOut,
    summary="Add the imports metric.py is missing (the panel's one-click fix)",
)
def add_imports(request, payload: SourceIn):
    fixed = missing_imports.fix(source_in(payload.source))
    if fixed.problem is not None:
        raise ApiError(422, fixed.problem, params=fixed.params, field="source", family="check")
    return {
        "source": fixed.source,
        "added": fixed.added,
        "line": fixed.line,
        "missing": fixed.left,
        "message": imports_added_words(fixed.added, fixed.left),
    }


class ConvertIn(BodyIn):
    source: str
    metric: str | None = Field(
        None,
        description="Where several functions could be the metric (the note "
        '"several_metric_functions" names them), the one to convert.',
        max_length=200,
    )


class NoteOut(Schema):
    line: int = Field(description="Its line in the converted metric.py; 0 for the whole file.")
    code: str
    message: str


class ConvertedOut(Schema):
    framework: str = Field(description='"dspy", "gepa", or "" when none was recognised.')
    changed: bool
    source: str = Field(description="The converted metric.py (the same text when unchanged).")
    notes: list[NoteOut]


# Why a text could not be converted, by its code: the text's own fault, or the moment's.
_CONVERT_STATUS = {"convert_busy": 429, "convert_rate_limited": 429}


@router.post(
    "/convert",
    response=ConvertedOut,
    summary="Convert a DSPy or gepa metric to the contract (the Convert page's conversion)",
)
def convert(request, payload: ConvertIn):
    source = source_in(payload.source)
    result = conversion_of(source, request.user, payload.metric or None)
    if "error" in result:
        error = result["error"]
        raise ApiError(
            _CONVERT_STATUS.get(error["code"], 422),
            error["code"],
            params=error["params"],
            field="source",
            message=convert_error_words(error["code"], error["params"]),
        )
    return {
        "framework": result["framework"] or "",
        "changed": result["changed"],
        "source": result["source"],
        "notes": [
            {
                "line": note["line"],
                "code": note["code"],
                "message": note_words(note["code"], note["params"]),
            }
            for note in result["notes"]
        ],
    }


@router.get("/{metric_id}", response=MetricOut, summary="Read a metric")
def metric_detail(request, metric_id: int):
    metric = selectors.get_metric_for_user(request.user, metric_id)
    return metric_out(metric)


@router.get("/{metric_id}/versions", response=list[VersionOut], summary="List a metric's versions")
def version_list(request, metric_id: int):
    metric = selectors.get_metric_for_user(request.user, metric_id)
    labels: dict[int, list[str]] = {}
    for version_id, name in metric.labels.values_list("version_id", "name"):
        labels.setdefault(version_id, []).append(name)
    return [
        {
            "number": v.number,
            "created_at": v.created_at,
            "verdict": v.verdict,
            "labels": labels.get(v.pk, []),
        }
        for v in selectors.versions_with_verdicts(metric)
    ]


@router.post(
    "/{metric_id}/versions",
    response={200: VersionSourceOut, 201: VersionSourceOut},
    summary="Save metric.py (a changed text becomes a new version)",
)
def version_save(request, metric_id: int, payload: VersionIn):
    metric = selectors.get_metric_for_user(request.user, metric_id)
    form = EditorForm(
        {
            "source": payload.source,
            "timeout_s": payload.timeout_s if payload.timeout_s is not None else metric.timeout_s,
            "reflection_model": (
                payload.reflection_model
                if payload.reflection_model is not None
                else metric.reflection_model
            ),
            "metric_model": (
                payload.metric_model if payload.metric_model is not None else metric.metric_model
            ),
        }
    )
    data = cleaned(form)
    files = files_in(payload.files, data["source"])
    with transaction.atomic():
        version, created = services.metric_save(
            metric,
            source=data["source"],
            files=files,
            cases=cases_in(payload.cases),
            timeout_s=data["timeout_s"],
            reflection_model=data["reflection_model"],
            metric_model=data["metric_model"],
        )
        try:
            services.version_label(version, payload.labels)
        except services.LabelRefused as refused:
            raise ApiError(422, refused.code, params=refused.params, field="labels") from None
    return Status(201 if created else 200, version_out(version, created))


@router.get("/{metric_id}/versions/{number}", response=VersionSourceOut, summary="Read one version")
def version_detail(request, metric_id: int, number: int):
    return version_out(selectors.get_version_for_user(request.user, metric_id, number))
