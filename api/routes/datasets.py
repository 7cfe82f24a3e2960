"""/api/v1/datasets: upload a CSV or JSON Lines file and read it back, as the playground's
evaluation page and the wizard's dataset step do: the same size limit, the same parsing,
the same refusals in the same words, the same guessed column roles and preview. The same
file is stored once per user (an upload of it again answers that dataset, 200 and
"reused"), within the user's storage quota (GET /me says what is used); a dataset no
evaluation or run keeps can be deleted, as on the Datasets page."""

from __future__ import annotations

import datetime
import functools

from django.db.models import QuerySet
from django.db.models.functions import Length
from django.shortcuts import get_object_or_404
from ninja import Field, File, Form, Router, Schema, Status, UploadedFile
from ninja.decorators import decorate_view

import dataset_files
from api.errors import ApiError
from api.forms import cleaned
from dataset_files import DatasetError
from evaluations import start
from submissions import services, storage, uploads
from submissions.models import Dataset
from wording import words

router = Router()
# Read through the page's upload form (not required here: a missing file is the form's
# own error, and a file past the limit never arrives whole).
THE_FILE = File(None, description="A CSV or JSON Lines file.")


class ColumnOut(Schema):
    name: str
    role: str = Field(description="input, output (the expected value) or ignore: as guessed.")
    type: str = Field(description="number, text or json: as read from its values.")


class WarningOut(Schema):
    code: str
    message: str


class CellOut(Schema):
    text: str
    kind: str = Field(description="number, json, text, empty, or bad (does not fit its type)")


class DatasetBriefOut(Schema):
    id: int
    name: str
    format: str = Field(description="csv or jsonl")
    encoding: str
    size: int = Field(description="The file's size in bytes.")
    rows: int
    sha256: str = Field(description="The file's SHA-256, hex: the same file is the same dataset.")
    created_at: datetime.datetime


class DatasetOut(DatasetBriefOut):
    columns: list[ColumnOut]
    recorded_column: str = Field(
        description="The column that most likely holds recorded outputs, by its name; '' if none."
    )
    split_column: str = Field(
        description="A column named “split” whose values all name splits; '' if none."
    )
    preview: list[list[CellOut]] = Field(
        description="The first rows, a cell a column, each value as the metric gets it."
    )
    warnings: list[WarningOut]


class DatasetUploadOut(DatasetOut):
    reused: bool = Field(
        description="True when you had uploaded this very file before (the same SHA-256): "
        "the answer is that dataset (200, keeping its name), and nothing more was stored."
    )


def _size_limited(run):
    """Stops an upload past the dataset limit while Django reads the body, as the pages'
    uploads do: the handler goes in before anything (the token's check included) reads it."""

    @functools.wraps(run)
    def limited(request, *args, **kwargs):
        limit = uploads.SizeLimitHandler(request, limit=dataset_files.MAX_BYTES)
        request.upload_handlers.insert(0, limit)
        request.dataset_size_limit = limit
        return run(request, *args, **kwargs)

    return limited


def _datasets(user) -> QuerySet[Dataset]:
    # The file's size without reading the file.
    return start.datasets_for_user(user).annotate(file_size=Length("raw"))


def brief_out(dataset: Dataset) -> dict:
    size = getattr(dataset, "file_size", None)
    return {
        "id": dataset.pk,
        "name": dataset.filename,
        "format": dataset.format,
        "encoding": dataset.encoding,
        "size": size if size is not None else dataset.size,
        "rows": dataset.row_count,
        "sha256": dataset.sha256,
        "created_at": dataset.created_at,
    }


def dataset_out(dataset: Dataset) -> dict:
    """The dataset as the playground's form starts with it: the roles it guesses, each
    column's type as read, the preview and the warnings in the reader's words."""
    guessed = start.guessed_settings(dataset)
    return {
        **brief_out(dataset),
        "columns": [
            {"name": column, "role": guessed["roles"][column], "type": guessed["types"][column]}
            for column in dataset.columns
        ],
        "recorded_column": guessed["recorded_column"],
        "split_column": guessed["split_column"],
        "preview": start.preview_rows(dataset, guessed["types"]),
        "warnings": [
            {
                "code": warning.get("code") or "",
                "message": words(
                    warning.get("code"), warning.get("params"), family="dataset_warning"
                ),
            }
            for warning in dataset.warnings
        ],
    }


def dataset_refused(exc: DatasetError, field: str = "file") -> ApiError:
    """A file that cannot be used, in the wizard's words."""
    if isinstance(exc, storage.QuotaExceeded):
        return ApiError(413, exc.code, params=exc.params, field=field)
    params = {"row": exc.row, "column": exc.column, **(exc.params or {})}
    status = 413 if exc.code == "too_large" else 422
    return ApiError(status, exc.code, params=params, family="dataset", field=field)


@router.post(
    "",
    response={201: DatasetUploadOut, 200: DatasetUploadOut},
    summary="Upload a dataset (multipart: file, and optionally name); 200 for a file stored before",
    description="A file you uploaded before (the same bytes) is not stored again: the "
    "answer is that dataset, 200 with reused true. A new file past your storage quota is "
    "refused, 413 storage_quota, with nothing stored.",
)
@decorate_view(_size_limited)
def dataset_upload(
    request,
    file: UploadedFile | None = THE_FILE,
    name: str | None = Form(None, max_length=255, description="Its name (else the file's)."),
):
    upload, refused = uploads.read_upload(request, request.dataset_size_limit)
    if upload is None:
        raise ApiError(413, "too_large", field="file", message=refused)
    sent = cleaned(upload)["file"]
    try:
        dataset, reused = services.dataset_store(
            owner=request.user,
            filename=sent.name or "dataset",
            data=sent.read(),
            name=" ".join((name or "").split()),
        )
    except DatasetError as exc:
        raise dataset_refused(exc) from None
    # Read back as the list reads it (its size without the file).
    dataset = _datasets(request.user).get(pk=dataset.pk)
    return Status(200 if reused else 201, {**dataset_out(dataset), "reused": reused})


@router.get("", response=list[DatasetBriefOut], summary="List your datasets, newest first")
def dataset_list(request, sha256: str = "", name: str = ""):
    """`sha256` and `name` find a file uploaded before, so a script need not upload it again."""
    found = _datasets(request.user)
    if sha256:
        found = found.filter(sha256=sha256.lower())
    if name:
        found = found.filter(filename=name)
    return [brief_out(dataset) for dataset in found]


@router.get("/{dataset_id}", response=DatasetOut, summary="Read a dataset")
def dataset_detail(request, dataset_id: int):
    return dataset_out(get_object_or_404(_datasets(request.user), pk=dataset_id))


@router.delete(
    "/{dataset_id}",
    response={204: None},
    summary="Delete a dataset; 409 dataset_in_use while evaluations or runs keep it",
)
def dataset_delete(request, dataset_id: int):
    dataset = get_object_or_404(_datasets(request.user), pk=dataset_id)
    try:
        services.dataset_delete(dataset)
    except services.DatasetInUse as refused:
        raise ApiError(409, "dataset_in_use", params=refused.uses) from None
    return Status(204, None)
