"""The labelled rows of an evaluation as a dataset of their own: a new version of its
dataset (parent = the dataset), holding only the rows a person judged and only the
columns the judge reads and the person's, written as CSV and stored as an upload is
(submissions.services.dataset_store: parsed again, deduplicated, within the owner's
storage quota).

Each cell is written so that, read back under the same column types, the judge gets the
value it got in the evaluation: text as it is (never prefixed as a download's formula-like
cells are: this file is data the run reads, not a spreadsheet's), any other JSON value as
its compact JSON (what a text column makes of it, and what a number or JSON column reads
back), an empty value empty. Every cell is quoted, so the reader's delimiter sniffing
cannot take a ";" or a tab inside a cell for the delimiter.
"""

from __future__ import annotations

import csv
import io

import dataset_files
from alignment.plans import Plan
from evaluations import stored_rows
from submissions.models import Dataset
from submissions.services import dataset_store


def _cell(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else dataset_files.as_json_text(value)


def csv_bytes(columns: list[str], rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    return out.getvalue().encode("utf-8")


def labelled_rows(plan: Plan) -> list[dict]:
    """The dataset's rows the plan names, in its order, read one at a time (the dataset's
    rows are never all decoded at once)."""
    wanted = sorted(set(plan.rows))
    text = stored_rows.rows_text(Dataset, plan.dataset.pk)
    found = dict(stored_rows.pick(stored_rows.iter_rows(text), wanted))
    return [found[index] for index in plan.rows]


def file_name(dataset: Dataset) -> str:
    stem = dataset.filename
    for extension in (".csv", ".tsv", ".jsonl", ".ndjson", ".json-lines"):
        if stem.lower().endswith(extension):
            stem = stem[: -len(extension)]
            break
    # Numbered, not worded: a file name is the same in every language the page is read in.
    return f"{stem[:200]}-v{dataset.versions.count() + 2}.csv"


def dataset_version(plan: Plan) -> Dataset:
    """The labelled rows stored as a version of the plan's dataset (the same file stored
    before is that dataset again). DatasetError when it cannot be stored (the quota)."""
    columns = plan.kept_columns
    data = csv_bytes(columns, labelled_rows(plan))
    owner = plan.evaluation.owner
    version, reused = dataset_store(owner=owner, filename=file_name(plan.dataset), data=data)
    if not reused and version.pk != plan.dataset.pk:
        Dataset.objects.filter(pk=version.pk).update(parent=plan.dataset.pk)
        version.parent_id = plan.dataset.pk
    return version
