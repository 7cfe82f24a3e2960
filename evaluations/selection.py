"""Which rows of a dataset an evaluation scores: a split (or every row), or a seeded
sample of N of them. Deterministic: the same selection of the same dataset is always the
same rows, in the same order, so two evaluations can be compared case by case."""

from __future__ import annotations

import random

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
    split = selection.get("split", "all")
    if split == "all":
        return list(range(len(table.rows)))
    if selection.get("mode") == "column":
        splits = dataset_files.split_by_column(table, selection.get("column", ""))
    else:
        train, validation, test = (value / 100 for value in selection.get("ratios", (70, 15, 15)))
        splits = dataset_files.split_by_ratio(
            len(table.rows),
            train=train,
            validation=validation,
            test=test,
            seed=selection.get("seed", 0),
        )
    return list(splits[split])


def select_rows(table: Table, selection: dict) -> list[int]:
    """The rows scored, in the order scored: the split, or `sample` of it drawn with
    `sample_seed` (sorted, so cases follow the file)."""
    rows = split_indices(table, selection)
    sample = int(selection.get("sample") or 0)
    if 0 < sample < len(rows):
        rows = sorted(random.Random(selection.get("sample_seed", 0)).sample(rows, sample))
    return rows
