"""A dataset's rows read one at a time, for the worker.

The wizard keeps an upload's rows in one JSON column (submissions.Dataset.rows): read the
usual way, 200,000 rows become 200,000 dicts in memory at once. The worker needs them one
after the other, so it asks the database for the column's text and decodes one row at a
time from it: what it holds is that text (about the size of the file) and the rows in
flight, not every row as objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from django.db.models import TextField
from django.db.models.functions import Cast

_DECODER = json.JSONDecoder()
_BETWEEN = " \t\r\n,"


def rows_text(dataset_model, dataset_id: int) -> str:
    """The rows column of dataset `dataset_id` as JSON text (an array of objects)."""
    return (
        dataset_model.objects.filter(pk=dataset_id)
        .annotate(text=Cast("rows", TextField()))
        .values_list("text", flat=True)
        .get()
    )


def iter_rows(text: str) -> Iterator[dict]:
    """Each element of the JSON array `text`, decoded as it is reached."""
    at = text.index("[") + 1
    end = len(text)
    while True:
        while at < end and text[at] in _BETWEEN:
            at += 1
        if at >= end or text[at] == "]":
            return
        value, at = _DECODER.raw_decode(text, at)
        yield value


def pick(rows: Iterable[dict], wanted: list[int]) -> Iterator[tuple[int, dict]]:
    """(index, row) for each index of `wanted` (ascending), in one pass over `rows`."""
    targets = iter(wanted)
    target = next(targets, None)
    for index, row in enumerate(rows):
        if target is None:
            return
        if index == target:
            yield index, row
            target = next(targets, None)
