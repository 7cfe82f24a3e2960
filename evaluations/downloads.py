"""An evaluation's cases as a file to download, written as the rows are read.

CSV cells are neutralised against formulas the way every CSV the site writes is
(dataset_files.safe_cell): a feedback that starts with "=" is data, and a spreadsheet
opening the file must show it, not run it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator

from dataset_files import safe_cell
from evaluations import selectors

# The file's columns; "row" is the row or line of the dataset file the case came from.
COLUMNS = tuple("row" if name == "file_row" else name for name in selectors.DOWNLOADED)
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


def record(row: dict) -> dict:
    """A case's values under the file's column names."""
    return {
        "index": row["index"],
        "row": row["file_row"],
        "status": row["status"],
        "problem": row["problem"],
        "exception_type": row["exception_type"],
        "score": row["score"],
        "feedback": row["feedback"],
        "scores": row["scores"],
        "metric_ms": row["metric_ms"],
        "run_ms": row["run_ms"],
        "total_ms": row["total_ms"],
        "task_usd": row["task_usd"],
        "metric_usd": row["metric_usd"],
        "second_score": row["second_score"],
        "differs": row["differs"],
    }


class _Line:
    """csv.writer's file: hands back what it was given, so each row becomes one chunk."""

    def write(self, text: str) -> str:
        return text


def csv_lines(rows: Iterable[dict]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(COLUMNS)
    for row in rows:
        values = record(row)
        # The named scores are one cell of JSON; everything else its own text.
        yield writer.writerow([safe_cell(values[column]) for column in COLUMNS])


def jsonl_lines(rows: Iterable[dict]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(record(row), ensure_ascii=False) + "\n"


WRITERS = {"csv": csv_lines, "jsonl": jsonl_lines}
