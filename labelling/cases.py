"""A labelling's cases: copied once from the dataset's rows into chunks, read one at a
time by position (the page) or by dataset row (the API's label).

The dataset keeps its rows as one JSON value (submissions.Dataset.rows). On a 200,000-row
file (27 MB of JSON) reading one row takes the database's json_extract 60 ms and
Python's json.loads of the whole column 320 ms, on every keystroke. A labelling therefore
keeps the columns it shows, CHUNK cases a row, decoded from the rows' text one at a time
when it is made (evaluations.stored_rows), and a case is one indexed read of a small row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import dataset_files
from evaluations import stored_rows
from evaluations.models import Evaluation
from labelling.models import CHUNK, CaseChunk, Labelling
from submissions import storage
from submissions.models import Dataset

# A cell longer than this is cut for the page (a person reads the start of it; the
# dataset keeps it whole).
MAX_CELL = 20_000


@dataclass(frozen=True)
class Case:
    position: int
    row: int
    input: dict
    output: object
    expected: object
    # The evaluation case's index (EvaluationCase.index), None when the row was not scored.
    case: int | None

    @property
    def number(self) -> int:
        return self.position + 1


def cell(value: object) -> object:
    """A value as the page shows it: text cut at MAX_CELL; JSON values other than text
    as their JSON text."""
    if value is None:
        return None
    text = value if isinstance(value, str) else dataset_files.as_json_text(value)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "…"


def _shown(row: dict, labelling: Labelling) -> dict:
    return {
        "input": {column: cell(row.get(column)) for column in labelling.input_columns},
        "output": cell(row.get(labelling.output_column)) if labelling.output_column else None,
        "expected": (
            cell(row.get(labelling.expected_column)) if labelling.expected_column else None
        ),
    }


def evaluation_rows(evaluation: Evaluation) -> dict[int, int]:
    """{dataset row: the index of the evaluation's case of it} (the first, should a row
    have been scored twice)."""
    found: dict[int, int] = {}
    for row, index in evaluation.cases.order_by("index").values_list("row", "index"):
        found.setdefault(row, index)
    return found


def _picked(text: str, wanted: dict[int, int] | None) -> Iterator[tuple[int, dict]]:
    rows = stored_rows.iter_rows(text)
    if wanted is None:
        yield from enumerate(rows)
    else:
        yield from stored_rows.pick(rows, sorted(wanted))


def _chunks(items: Iterable[dict], labelling: Labelling) -> Iterator[CaseChunk]:
    batch: list[dict] = []
    start = 0
    for item in items:
        batch.append(item)
        if len(batch) == CHUNK:
            yield CaseChunk(
                labelling=labelling, start=start, first_row=batch[0]["row"], cases=batch
            )
            start += CHUNK
            batch = []
    if batch:
        yield CaseChunk(labelling=labelling, start=start, first_row=batch[0]["row"], cases=batch)


def fill(labelling: Labelling) -> int:
    """Copy the labelling's cases into its chunks; how many there are. The dataset's rows
    (all of them, or those its evaluation scored) in the order of the file."""
    wanted = evaluation_rows(labelling.evaluation) if labelling.evaluation_id else None
    text = stored_rows.rows_text(Dataset, labelling.dataset_id)
    items = (
        {"row": index, **_shown(row, labelling), "case": (wanted or {}).get(index)}
        for index, row in _picked(text, wanted)
    )
    total = 0
    pending: list[CaseChunk] = []
    for chunk in _chunks(items, labelling):
        total += len(chunk.cases)
        labelling.stored_bytes += storage.json_bytes(chunk.cases)
        pending.append(chunk)
        if len(pending) >= 50:
            CaseChunk.objects.bulk_create(pending)
            pending = []
    CaseChunk.objects.bulk_create(pending)
    return total


def _case(chunk: CaseChunk, offset: int) -> Case:
    item = chunk.cases[offset]
    return Case(
        position=chunk.start + offset,
        row=item["row"],
        input=item["input"],
        output=item["output"],
        expected=item["expected"],
        case=item.get("case"),
    )


def case_at(labelling: Labelling, position: int) -> Case | None:
    """The case at `position` (0-based), or None past the last."""
    if not 0 <= position < labelling.total:
        return None
    start = position - position % CHUNK
    chunk = CaseChunk.objects.filter(labelling=labelling, start=start).first()
    if chunk is None or position - start >= len(chunk.cases):
        return None
    return _case(chunk, position - start)


def case_of_row(labelling: Labelling, row: int) -> Case | None:
    """The case of dataset row `row`, or None when the labelling does not hold it."""
    chunk = (
        CaseChunk.objects.filter(labelling=labelling, first_row__lte=row)
        .order_by("-first_row")
        .first()
    )
    if chunk is None:
        return None
    for offset, item in enumerate(chunk.cases):
        if item["row"] == row:
            return _case(chunk, offset)
    return None
