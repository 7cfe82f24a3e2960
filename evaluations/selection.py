"""Which rows of a dataset an evaluation scores: a split (or every row), or a seeded
sample of N of them. Deterministic: the same selection of the same dataset is always the
same rows, in the same order, so two evaluations can be compared case by case."""

from __future__ import annotations

import random
from collections.abc import Callable

import dataset_files
from dataset_files.table import Table

SPLITS = ("all", "train", "validation", "test")


def default_selection(**given) -> dict:
    return {
        "split": "all",
        "mode": "ratio",
        "ratios": [70, 15, 15],
        "seed": 0,
        "column": "",
        "sample": 0,
        "sample_seed": 0,
        **given,
    }


def split_indices(table: Table, selection: dict) -> list[int]:
    """Every row of the selection's split, in dataset order (DatasetError if the split
    cannot be made)."""
    return _split(len(table.rows), selection, lambda: table)


def _split(count: int, selection: dict, table_for_column: Callable[[], Table]) -> list[int]:
    split = selection.get("split", "all")
    if split == "all":
        return list(range(count))
    if selection.get("mode") == "column":
        splits = dataset_files.split_by_column(table_for_column(), selection.get("column", ""))
    else:
        train, validation, test = (value / 100 for value in selection.get("ratios", (70, 15, 15)))
        splits = dataset_files.split_by_ratio(
            count, train=train, validation=validation, test=test, seed=selection.get("seed", 0)
        )
    return list(splits[split])


def _sample(rows: list[int], selection: dict) -> list[int]:
    sample = int(selection.get("sample") or 0)
    if 0 < sample < len(rows):
        rows = sorted(random.Random(selection.get("sample_seed", 0)).sample(rows, sample))
    return rows


def select_rows(table: Table, selection: dict) -> list[int]:
    """The rows scored, in the order scored: the split, or `sample` of it drawn with
    `sample_seed` (sorted, so cases follow the file)."""
    return _sample(split_indices(table, selection), selection)


def select_rows_of(count: int, selection: dict, table_for_column: Callable[[], Table]) -> list[int]:
    """select_rows for a dataset of `count` rows that is not read whole: only a split
    column asks for a table, and then only of that column (`table_for_column()`)."""
    return _sample(_split(count, selection, table_for_column), selection)
