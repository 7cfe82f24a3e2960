"""Rows to cases: Input columns make `input`, Output columns make `expected`."""

from __future__ import annotations

from typing import Literal

from dataset_files.errors import DatasetError
from dataset_files.table import Table

Role = Literal["input", "output", "ignore"]
ROLES: tuple[str, ...] = ("input", "output", "ignore")


def build_cases(table: Table, roles: dict[str, Role]) -> list[dict]:
    """One case a row: {"input": {...}, "output": None, "expected": {...} or None}.

    A column missing from `roles` is ignored. `output` stays None: in a run it
    is what run(artifact, input) returns. `expected` is None when every Output
    cell of the row is empty, so a metric can tell "no reference" from "".
    """
    inputs, outputs = role_columns(table, roles)
    return [case_of_row(row, inputs, outputs) for row in table.rows]


def role_columns(table: Table, roles: dict[str, Role]) -> tuple[list[str], list[str]]:
    """The Input and the Output columns, in table order; DatasetError for a role or a
    column that does not exist, or no Input column."""
    known = set(table.columns)
    for column, role in roles.items():
        if column not in known:
            raise DatasetError("unknown_column", column=column)
        if role not in ROLES:
            raise DatasetError("bad_role", column=column, params={"role": role})
    # Table order, not the order of `roles`: the user sees the columns so.
    inputs = [column for column in table.columns if roles.get(column) == "input"]
    outputs = [column for column in table.columns if roles.get(column) == "output"]
    if not inputs:
        raise DatasetError("no_input_column")
    return inputs, outputs


def case_of_row(
    row: dict, inputs: list[str], outputs: list[str], recorded: str | None = None
) -> dict:
    """One row as a case. `recorded`, when given, names the column whose cell is the
    output to score (an evaluation of recorded outputs); else `output` is None."""
    expected = {column: row.get(column) for column in outputs}
    return {
        "input": {column: row.get(column) for column in inputs},
        "output": row.get(recorded) if recorded else None,
        "expected": None if all(map(is_empty, expected.values())) else expected,
    }


def is_empty(value: object) -> bool:
    # A spreadsheet cell holding only a stray space is no reference answer.
    return value is None or (isinstance(value, str) and not value.strip())
