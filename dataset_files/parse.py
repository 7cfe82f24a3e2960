"""An uploaded file's bytes to a Table, or a DatasetError naming what to fix."""

from __future__ import annotations

import re

from dataset_files.csvfile import parse_csv
from dataset_files.encoding import decode
from dataset_files.errors import DatasetError
from dataset_files.jsonl import parse_jsonl
from dataset_files.table import Table

MAX_BYTES = 20 * 1024 * 1024
MAX_ROWS = 200_000
MAX_COLUMNS = 200
CSV_EXTENSIONS = (".csv", ".tsv")
JSONL_EXTENSIONS = (".jsonl", ".ndjson", ".json-lines")
_LEADING_SPACE = re.compile(r"\s*")


def parse_dataset(
    data: bytes,
    *,
    filename: str,
    max_bytes: int = MAX_BYTES,
    max_rows: int = MAX_ROWS,
    max_columns: int = MAX_COLUMNS,
) -> Table:
    # Before anything else: a huge upload is refused without decoding it.
    if len(data) > max_bytes:
        raise DatasetError("too_large", params={"size": len(data), "limit": max_bytes})
    if not data:
        raise DatasetError("empty")
    text, encoding, guessed = decode(data)
    if not text or text.isspace():
        raise DatasetError("empty")
    warnings = [{"code": "encoding_guessed", "params": {"encoding": encoding}}] if guessed else []
    if detect_format(filename, text) == "jsonl":
        parsed = parse_jsonl(text, max_rows=max_rows, max_columns=max_columns)
        return Table(
            columns=parsed.columns,
            rows=parsed.rows,
            format="jsonl",
            encoding=encoding,
            warnings=warnings + parsed.scan.warnings(),
            row_numbers=parsed.row_numbers,
        )
    table = parse_csv(text, max_rows=max_rows, max_columns=max_columns)
    return Table(
        columns=table.columns,
        rows=table.rows,
        format="csv",
        encoding=encoding,
        warnings=warnings + table.scan.warnings(),
        row_numbers=table.row_numbers,
        delimiter=table.delimiter,
    )


def detect_format(filename: str, text: str) -> str:
    """The format, "csv" or "jsonl": by the extension, else by the first non-space character."""
    name = filename.lower()
    if name.endswith(JSONL_EXTENSIONS):
        return "jsonl"
    if name.endswith(CSV_EXTENSIONS):
        return "csv"
    # A CSV header never starts with "{"; a JSON Lines file always does, or is
    # a JSON array or value that parse_jsonl reports as not_object.
    start = _LEADING_SPACE.match(text).end()
    return "jsonl" if text[start : start + 1] in ("{", "[") else "csv"
