"""What a draft's dataset settings make of its dataset: roles, splits and the check's
sample. Computing them reads every row, so the result is stored on the draft
(`Draft.dataset_facts`, read through `current_facts`) and only recomputed when the
settings change."""

from __future__ import annotations

import hashlib
import json

import dataset_files
from dataset_files import DatasetError, Table
from submissions.models import Dataset, Draft

SAMPLE_SIZE = 3
PREVIEW_ROWS = 10
# Column names that usually hold the reference answer, or nothing the artifact needs.
OUTPUT_NAMES = {"expected", "label", "answer", "output", "target", "gold", "reference"}
IGNORED_NAMES = {"id", "split", "notes", "note", "timestamp", "created_at"}


def guess_roles(columns: list[str]) -> dict[str, str]:
    roles = {}
    for column in columns:
        name = column.strip().casefold()
        if name in OUTPUT_NAMES:
            roles[column] = "output"
        elif name in IGNORED_NAMES or name.endswith("_id"):
            roles[column] = "ignore"
        else:
            roles[column] = "input"
    return roles


def names_splits(table: Table, column: str) -> bool:
    try:
        dataset_files.split_by_column(table, column)
    except DatasetError:
        return False
    return True


def guess_split_column(table: Table) -> str:
    """A column named "split" whose values all name splits, or ""."""
    column = next((c for c in table.columns if c.strip().casefold() == "split"), "")
    return column if column and names_splits(table, column) else ""


def table_of(dataset: Dataset) -> Table:
    return Table(
        columns=list(dataset.columns),
        rows=list(dataset.rows),
        format=dataset.format,
        encoding=dataset.encoding,
        warnings=list(dataset.warnings),
        row_numbers=list(dataset.row_numbers),
    )


def split_rows(
    dataset: Dataset, *, mode: str, ratios: tuple[int, int, int], seed: int, column: str
) -> dict[str, list[int]]:
    """Row indices of each split; DatasetError for splits that cannot be made."""
    if mode == Draft.SplitMode.COLUMN:
        return dataset_files.split_by_column(table_of(dataset), column)
    train, validation, test = (value / 100 for value in ratios)
    return dataset_files.split_by_ratio(
        dataset.row_count, train=train, validation=validation, test=test, seed=seed
    )


def dataset_settings(draft: Draft) -> dict:
    """The draft's dataset step values, as compute_facts takes them."""
    return {
        "roles": draft.roles,
        "mode": draft.split_mode,
        "ratios": (draft.train_percent, draft.validation_percent, draft.test_percent),
        "seed": draft.seed,
        "column": draft.split_column,
    }


def _facts_key(dataset_id: int, settings: dict) -> str:
    text = json.dumps([dataset_id, settings], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compute_facts(
    dataset: Dataset, *, roles: dict, mode: str, ratios: tuple, seed: int, column: str
) -> dict:
    """Everything the wizard needs to know about a dataset under these settings, read
    from every row once: the first problem (or None), the split counts, and the
    check's 3 sample cases. Stored on the draft, so pages never read every row."""
    settings = {
        "roles": roles,
        "mode": mode,
        "ratios": list(ratios),
        "seed": seed,
        "column": column,
    }
    facts: dict = {"key": _facts_key(dataset.pk, settings), "problem": None}
    try:
        cases = dataset_files.build_cases(table_of(dataset), roles)
        splits = split_rows(dataset, mode=mode, ratios=ratios, seed=seed, column=column)
        sample = dataset_files.sample_cases(splits, cases, SAMPLE_SIZE, seed=seed)
    except DatasetError as exc:
        facts["problem"] = {
            "code": exc.code,
            "params": {**exc.params, "row": exc.row, "column": exc.column},
        }
        return facts
    facts["counts"] = dataset_files.counts(splits)
    facts["sample"] = sample
    facts["sample_cases"] = [cases[index] for index in sample]
    facts["sample_rows"] = [
        dataset.row_numbers[i] if dataset.row_numbers else i + 1 for i in sample
    ]
    return facts


def current_facts(draft: Draft) -> dict | None:
    """The stored facts when they belong to the draft's current settings (the services
    store them with every write that changes them), else fresh ones. A read: it never
    writes the draft."""
    if draft.dataset_id is None:
        return None
    settings = dataset_settings(draft)
    stored = draft.dataset_facts or {}
    key = _facts_key(draft.dataset_id, {**settings, "ratios": list(settings["ratios"])})
    if stored.get("key") != key:
        return compute_facts(draft.dataset, **settings)
    return stored


def draft_splits(draft: Draft) -> dict[str, list[int]]:
    """Row indices of each split (reads every row for a split column)."""
    assert draft.dataset is not None
    return split_rows(
        draft.dataset,
        mode=draft.split_mode,
        ratios=(draft.train_percent, draft.validation_percent, draft.test_percent),
        seed=draft.seed,
        column=draft.split_column,
    )


def sample_indices(draft: Draft) -> list[int]:
    """The 3 train rows the contract check runs on (deterministic for the draft's seed);
    DatasetError when the dataset step has a problem."""
    return sample_of(current_facts(draft))


def sample_of(facts: dict | None) -> list[int]:
    """sample_indices() from facts already read."""
    if facts is None or facts["problem"] is not None:
        problem = (facts or {}).get("problem") or {"code": "no_dataset", "params": {}}
        raise DatasetError(problem["code"], params=problem["params"])
    return facts["sample"]
