"""CSV text to columns and rows: a sniffed delimiter, strict quotes, cells as strings."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from dataset_files.errors import DatasetError
from dataset_files.formulas import PLAIN_FIRST, FormulaScan

DELIMITERS = (",", ";", "\t")
SNIFF_CHARS = 64 * 1024
SNIFF_RECORDS = 50
_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?")


@dataclass
class CsvData:
    columns: list[str]
    rows: list[dict[str, object]]
    row_numbers: list[int]
    delimiter: str
    scan: FormulaScan = field(default_factory=FormulaScan)


def sniff_delimiter(text: str) -> str:
    """The delimiter that splits the first records into the most equal widths.

    csv.Sniffer also guesses quoting and often picks a letter or a space as
    the delimiter; counting how many records match the header's width with
    each candidate is simpler and steadier.
    """
    sample = text[:SNIFF_CHARS]
    cut = len(text) > SNIFF_CHARS
    chosen, best = DELIMITERS[0], (0, 1)
    for delimiter in DELIMITERS:
        records: list[list[str]] = []
        try:
            for record in csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter):
                if any(record):
                    records.append(record)
                if len(records) > SNIFF_RECORDS:
                    break
        except csv.Error:
            pass  # a bad quote is reported by the real parse, which names the row
        if cut and len(records) <= SNIFF_RECORDS:
            records = records[:-1]  # the sample may end in the middle of this one
        if not records:
            continue
        width = len(records[0])
        score = (sum(len(record) == width for record in records[1:]), width)
        if width > 1 and score > best:
            chosen, best = delimiter, score
    return chosen


def parse_csv(text: str, *, max_rows: int, max_columns: int) -> CsvData:
    """Rows are numbered as a spreadsheet shows them: the header is row 1.

    Blank records (a blank line, or only empty cells as spreadsheets export
    trailing rows) are skipped but still counted, so numbers match the file.
    """
    delimiter = sniff_delimiter(text)
    # strict: an unclosed quote or text after a closing quote is an error with
    # its row, where the lax default would silently glue cells together.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    data = CsvData([], [], [], delimiter)
    header: list[str] | None = None
    row = 0
    while True:
        line = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise _csv_error(exc, row + 1, line) from None
        row += 1
        if not any(record):
            continue
        if header is None:
            header = _header(record, row, max_columns)
            data.columns = header
            _scan(data.scan, header, header, row)
            continue
        if len(record) != len(header):
            raise DatasetError(
                "ragged_row",
                row=row,
                params={"expected": len(header), "found": len(record), "line": line},
            )
        if len(data.rows) == max_rows:
            raise DatasetError("too_many_rows", row=row, params={"limit": max_rows})
        data.rows.append(dict(zip(header, record, strict=True)))
        data.row_numbers.append(row)
        _scan(data.scan, header, record, row)
    if header is None:
        raise DatasetError("no_header")
    if not data.rows:
        raise DatasetError("no_rows")
    return data


def _scan(scan: FormulaScan, header: list[str], record: list[str], row: int) -> None:
    # The set test keeps the per-cell cost low on a 20 MB file.
    for name, cell in zip(header, record, strict=True):
        if cell[:1] not in PLAIN_FIRST:
            scan.check(cell, row, name)


def _header(record: list[str], row: int, max_columns: int) -> list[str]:
    # Spreadsheets and hand edits leave spaces around names; nobody means them.
    names = [cell.strip() for cell in record]
    if len(names) > max_columns:
        raise DatasetError(
            "too_many_columns", row=row, params={"count": len(names), "limit": max_columns}
        )
    # A first row of numbers (or of blanks) is data: the file has no header.
    if all(not name or _NUMBER.fullmatch(name) for name in names):
        raise DatasetError("no_header", row=row)
    seen: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if not name:
            raise DatasetError("empty_column_name", row=row, params={"position": position})
        if name in seen:
            raise DatasetError(
                "duplicate_column",
                row=row,
                column=name,
                params={"name": name, "positions": [seen[name], position]},
            )
        seen[name] = position
    return names


def _csv_error(exc: csv.Error, row: int, line: int) -> DatasetError:
    # The csv module only words its errors; these are the reader's three.
    message = str(exc)
    if message.startswith("field larger than field limit"):
        return DatasetError(
            "cell_too_large", row=row, params={"line": line, "limit": csv.field_size_limit()}
        )
    if message.startswith("unexpected end of data"):
        return DatasetError("unclosed_quote", row=row, params={"line": line})
    return DatasetError("bad_quote", row=row, params={"line": line})
