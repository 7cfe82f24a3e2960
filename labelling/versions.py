"""A labelling saved as a new version of its dataset: the same rows, plus a column of
each labeller's labels and one of their notes, written again as a file in the dataset's
own format and stored as an upload is (its own Dataset row, parent = the original, within
the owner's storage quota). The original row is never written."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

import dataset_files
from evaluations import stored_rows
from labelling import selectors
from labelling.models import Label, Labelling
from submissions import storage
from submissions.datasets import PREVIEW_ROWS
from submissions.models import Dataset


@dataclass(frozen=True)
class Added:
    """The two columns one labeller's labels become."""

    labeller_id: int
    value_column: str
    note_column: str


def _free(name: str, taken: set[str]) -> str:
    """`name`, or name_2, name_3 ... when the dataset has a column of that name already
    (a version of a version keeps the labels it had)."""
    found, n = name, 1
    while found in taken:
        n += 1
        found = f"{name}_{n}"
    taken.add(found)
    return found


def added_columns(labelling: Labelling, columns: list[str]) -> list[Added]:
    """The owner's columns (human_label or human_score, human_note), then those of each
    invitee who labelled a row, named after them (human_label_<username> ...)."""
    base = "human_label" if labelling.kind == Labelling.Kind.PASS_FAIL else "human_score"
    taken = set(columns)
    labelled = set(
        Label.objects.filter(labelling=labelling).values_list("labeller_id", flat=True).distinct()
    )
    added = []
    for person in selectors.labellers(labelling):
        owner = person.pk == labelling.owner_id
        if not owner and person.pk not in labelled:
            continue
        suffix = "" if owner else f"_{person.get_username()}"
        added.append(
            Added(person.pk, _free(base + suffix, taken), _free("human_note" + suffix, taken))
        )
    return added


def _cell(labelling: Labelling, value: float):
    if labelling.kind == Labelling.Kind.PASS_FAIL:
        return "pass" if value >= 1 else "fail"
    return int(value) if float(value).is_integer() else value


def labelled_rows(labelling: Labelling, columns: list[str]) -> tuple[list[str], list[dict]]:
    """The new file's columns and rows: each of the dataset's rows with the labels and
    notes given to it (None where a labeller gave none)."""
    added = added_columns(labelling, columns)
    given: dict[tuple[int, int], tuple[float, str]] = {
        (labeller, row): (value, note)
        for labeller, row, value, note in Label.objects.filter(labelling=labelling).values_list(
            "labeller_id", "row", "value", "note"
        )
    }
    text = stored_rows.rows_text(Dataset, labelling.dataset_id)
    rows = []
    for index, row in enumerate(stored_rows.iter_rows(text)):
        extra = {}
        for columns_of in added:
            value, note = given.get((columns_of.labeller_id, index), (None, None))
            extra[columns_of.value_column] = None if value is None else _cell(labelling, value)
            extra[columns_of.note_column] = note if value is not None else None
        rows.append({**row, **extra})
    new_columns = list(columns)
    for columns_of in added:
        new_columns += [columns_of.value_column, columns_of.note_column]
    return new_columns, rows


def file_bytes(format: str, columns: list[str], rows: list[dict]) -> bytes:
    """The rows written as a file of `format`: CSV through the csv module, each cell made
    safe for a spreadsheet (dataset_files.safe_cell: a formula-like cell gets a leading
    quote); JSON Lines one object a line. UTF-8."""
    if format == "jsonl":
        lines = (json.dumps(row, ensure_ascii=False) for row in rows)
        return "".join(line + "\n" for line in lines).encode()
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([dataset_files.safe_cell(column) for column in columns])
    for row in rows:
        writer.writerow([dataset_files.safe_cell(row.get(column)) for column in columns])
    return out.getvalue().encode()


def version_name(dataset: Dataset) -> str:
    stem = dataset.filename
    for extension in (".csv", ".tsv", ".jsonl", ".ndjson", ".json-lines"):
        if stem.lower().endswith(extension):
            stem = stem[: -len(extension)]
            break
    extension = ".jsonl" if dataset.format == "jsonl" else ".csv"
    # Numbered, not worded: a file name is the same in every language the page is read in.
    number = dataset.versions.count() + 2
    return f"{stem[: 255 - 20]}-v{number}{extension}"


def version_create(labelling: Labelling) -> tuple[Dataset, bool]:
    """The labelling's dataset again with its labels: (the new dataset, whether the owner
    had that very file already, which is then the answer and nothing is stored).
    dataset_files.DatasetError when the file cannot be made (past the size limit),
    storage.QuotaExceeded past the owner's quota."""
    original = Dataset.objects.only("filename", "format", "columns", "owner").get(
        pk=labelling.dataset_id
    )
    columns, rows = labelled_rows(labelling, list(original.columns))
    data = file_bytes(original.format, columns, rows)
    name = version_name(original)
    digest = hashlib.sha256(data).hexdigest()
    owner = original.owner
    found = _stored_before(owner, digest)
    if found is not None:
        return found, True
    storage.admit(owner, len(data))
    # Read back as an upload reads it: the rows, their numbers, the warnings and types
    # are what an upload of this file would store.
    table = dataset_files.parse_dataset(data, filename=name)
    preview = table.rows[:PREVIEW_ROWS]
    cost = storage.cost(raw=data, rows=table.rows, preview=preview, row_numbers=table.row_numbers)
    with transaction.atomic():
        # One store of a user's at a time, as uploads are: two cannot both pass the quota.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).exists()
        found = _stored_before(owner, digest)
        if found is not None:
            return found, True
        storage.admit(owner, cost)
        version = Dataset.objects.create(
            owner=owner,
            filename=name,
            raw=data,
            sha256=digest,
            format=table.format,
            encoding=table.encoding,
            columns=table.columns,
            row_count=len(table.rows),
            preview=preview,
            rows=table.rows,
            row_numbers=table.row_numbers,
            inferred_types=dataset_files.infer_types(table),
            warnings=table.warnings,
            stored_bytes=cost,
            parent=original,
        )
    return version, False


def _stored_before(owner, digest: str) -> Dataset | None:
    return (
        Dataset.objects.filter(owner=owner, sha256=digest)
        .defer("rows", "row_numbers", "preview")
        .order_by("pk")
        .first()
    )
