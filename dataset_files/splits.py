"""Train/validation/test splits as row indices, and the contract check's sample."""

from __future__ import annotations

import math
import numbers
import random
from fractions import Fraction

from dataset_files.column_types import is_empty
from dataset_files.errors import DatasetError
from dataset_files.table import Table

SPLITS = ("train", "validation", "test")
RATIO_TOLERANCE = 1e-9
SAMPLE_SIZE = 3
# What a split column may say, compared case-insensitively, spaces stripped.
SPLIT_VALUES = {
    "train": "train",
    "training": "train",
    "validation": "validation",
    "valid": "validation",
    "val": "validation",
    "dev": "validation",
    "test": "test",
    "testing": "test",
}

Seed = int | str


def split_by_ratio(
    n: int, *, train: float, validation: float, test: float, seed: Seed
) -> dict[str, list[int]]:
    """Rows 0..n-1 shuffled by `seed`, then cut by the ratios; each split sorted.

    Sizes follow the largest remainder method, so they add up to n and each
    is within 1 of n * ratio.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, not {n!r}")
    ratios = (train, validation, test)
    _check_ratios(ratios)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    splits: dict[str, list[int]] = {}
    start = 0
    for name, size in zip(SPLITS, split_sizes(n, ratios), strict=True):
        splits[name] = sorted(order[start : start + size])
        start += size
    return splits


def split_sizes(n: int, ratios: tuple[float, ...]) -> list[int]:
    # Exact fractions: with floats, 10 * 0.7 floors to 6 or 7 by luck, and
    # the leftover rows could exceed what the remainders account for.
    exact = [Fraction(ratio) for ratio in ratios]
    total = sum(exact)
    quotas = [n * ratio / total for ratio in exact]
    sizes = [math.floor(quota) for quota in quotas]
    # Ties go to the earlier split, so train wins a row over validation.
    by_remainder = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - sizes[i]), i))
    for i in by_remainder[: n - sum(sizes)]:
        sizes[i] += 1
    return sizes


def _check_ratios(ratios: tuple[object, ...]) -> None:
    params = {
        # Kept JSON-ready: a NaN or a Decimal is passed on as text.
        name: value if isinstance(value, int | float) and math.isfinite(value) else str(value)
        for name, value in zip(SPLITS, ratios, strict=True)
    }

    def fail(reason: str) -> DatasetError:
        return DatasetError("bad_ratios", params={**params, "reason": reason})

    for value in ratios:
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
        ):
            raise fail("not_number")
        if value < 0:
            raise fail("negative")
    if ratios[0] == 0:
        raise fail("train_zero")
    if abs(sum(float(value) for value in ratios) - 1) > RATIO_TOLERANCE:
        raise fail("sum_not_one")


def split_by_column(table: Table, column: str) -> dict[str, list[int]]:
    """Splits named by a column: train/training, validation/valid/val/dev, test/testing."""
    if column not in table.columns:
        raise DatasetError("unknown_column", column=column)
    splits: dict[str, list[int]] = {name: [] for name in SPLITS}
    for index, row in enumerate(table.rows):
        value = row.get(column)
        if is_empty(value):
            raise DatasetError(
                "empty_split_value",
                row=table.file_row(index),
                column=column,
                params={"index": index},
            )
        name = SPLIT_VALUES.get(value.strip().casefold()) if isinstance(value, str) else None
        if name is None:
            raise DatasetError(
                "unknown_split_value",
                row=table.file_row(index),
                column=column,
                params={"value": value, "index": index},
            )
        splits[name].append(index)
    return splits


def counts(splits: dict[str, list[int]]) -> dict[str, int]:
    return {name: len(splits.get(name, ())) for name in SPLITS}


def sample_cases(
    splits: dict[str, list[int]], cases: list[dict], k: int = SAMPLE_SIZE, *, seed: Seed
) -> list[int]:
    """k distinct train rows for the contract check, sorted; deterministic for a seed.

    Rows with an expected value come first: a metric usually compares the
    output with it, so the check should exercise that path; rows without one
    fill in only when too few have it.
    """
    train = list(splits.get("train", ()))
    if len(train) < k:
        raise DatasetError("too_few_train_cases", params={"count": len(train), "needed": k})
    with_expected = [index for index in train if cases[index].get("expected") is not None]
    without = [index for index in train if cases[index].get("expected") is None]
    rng = random.Random(seed)
    chosen = rng.sample(with_expected, min(k, len(with_expected)))
    chosen += rng.sample(without, k - len(chosen))
    return sorted(chosen)
