"""The parsed file: column names, rows keyed by them, and what parsing noticed."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    columns: list[str]
    rows: list[dict[str, object]]
    format: str  # "csv" | "jsonl"
    encoding: str  # a Python codec name, e.g. "utf-8", "utf-8-sig", "utf-16-le", "cp1252"
    warnings: list[dict] = field(default_factory=list)  # {"code": ..., "params": {...}}
    # Where each row sits in the file (see DatasetError.row), so later errors
    # point the user at the line they can find; rows skip blank lines.
    row_numbers: list[int] = field(default_factory=list)
    delimiter: str | None = None  # the CSV delimiter that was sniffed

    def file_row(self, index: int) -> int:
        """The file row of rows[index]; a hand-built Table counts from 1."""
        if self.row_numbers:
            return self.row_numbers[index]
        return index + 1
