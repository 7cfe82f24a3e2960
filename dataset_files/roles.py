"""Rows to cases: Input columns make `input`, Output columns make `expected`."""

from __future__ import annotations

from typing import Literal

from dataset_files.column_types import cell_value, check_types, is_empty
from dataset_files.errors import DatasetError
from dataset_files.human import HUMAN_ROLES
from dataset_files.table import Table

Role = Literal["input", "output", "ignore", "human_score", "human_label", "human_note"]
# The human columns (dataset_files.human) reach neither the metric nor the artifact: an
# evaluation compares them with the metric's scores.
ROLES: tuple[str, ...] = ("input", "output", "ignore", *HUMAN_ROLES)


def build_cases(
    table: Table, roles: dict[str, Role], types: dict[str, str] | None = None
) -> list[dict]:
    """One case a row: {"input": {...}, "output": None, "expected": {...} or None}.

    A column missing from `roles` is ignored. `output` stays None: in a run it
    is what run(artifact, input) returns. `expected` is None when every Output
    cell of the row is empty, so a metric can tell "no reference" from "".

    `types` ({column: "number" | "text" | "json"}) gives each value its declared
    type (column_types.typed_value), the first that does not fit a DatasetError
    with its row and column; without it, values are as read.
    """
    inputs, outputs = role_columns(table, roles)
    if types is not None:
        check_types(table.columns, types)
    return [
        case_of_row(row, inputs, outputs, types=types, file_row=table.file_row(index))
        for index, row in enumerate(table.rows)
    ]


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
    row: dict,
    inputs: list[str],
    outputs: list[str],
    recorded: str | None = None,
    *,
    types: dict[str, str] | None = None,
    file_row: int | None = None,
) -> dict:
    """One row as a case. `recorded`, when given, names the column whose cell is the
    output to score (an evaluation of recorded outputs); else `output` is None.

    `types`: each column's declared type (a column it does not name stays as read);
    `file_row`: the row a value that does not fit its type is reported at."""

    def value(column: str) -> object:
        return cell_value(row, column, types, file_row)

    expected = {column: value(column) for column in outputs}
    return {
        "input": {column: value(column) for column in inputs},
        "output": value(recorded) if recorded else None,
        "expected": None if all(map(is_empty, expected.values())) else expected,
    }
