"""What a draft's dataset settings make of its dataset: roles, column types, splits and
the check's sample. Computing them reads every row, so the result is stored on the draft
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
HUMAN_NOTE_WORDS = ("note", "comment", "reason", "why")
HUMAN_SCORE_WORDS = ("score", "rating", "grade")


def guess_human_role(name: str) -> str | None:
    """A human column's role by its (casefolded) name: one that says "human" and what it
    holds (human_note, human_score, human_rating; human_label or just human)."""
    if "human" not in name:
        return None
    if any(word in name for word in HUMAN_NOTE_WORDS):
        return "human_note"
    if any(word in name for word in HUMAN_SCORE_WORDS):
        return "human_score"
    return "human_label"


def guess_roles(columns: list[str]) -> dict[str, str]:
    roles = {}
    for column in columns:
        name = column.strip().casefold()
        human = guess_human_role(name)
        if human is not None:
            # One column a role: a second person's (human_label_bob, a labelled version's)
            # is ignored, never an input the metric would see.
            roles[column] = human if human not in roles.values() else "ignore"
        elif name in OUTPUT_NAMES:
            roles[column] = "output"
        elif name in IGNORED_NAMES or name.endswith("_id"):
            roles[column] = "ignore"
        else:
            roles[column] = "input"
    judged = {"human_score", "human_label"} & set(roles.values())
    for column, role in roles.items():
        if role == "human_note" and not judged:
            roles[column] = "ignore"  # a note alone says nothing to compare with
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


def inferred_types(dataset: Dataset) -> dict[str, str]:
    """Each column's type as read, stored at upload; read from the rows for a dataset
    stored without them (the migration that added them filled them in)."""
    stored = dataset.inferred_types or {}
    if all(column in stored for column in dataset.columns):
        return {column: stored[column] for column in dataset.columns}
    return dataset_files.infer_types(table_of(dataset))


def column_types(dataset: Dataset, declared: dict | None) -> dict[str, str]:
    """Each column's type, as the metric gets its values: the one `declared` names, else
    the type as read (a draft or an evaluation that declared none keeps the file's)."""
    declared = declared or {}
    inferred = inferred_types(dataset)
    return {column: declared.get(column) or inferred[column] for column in dataset.columns}


def preview_cells(dataset: Dataset, types: dict[str, str]) -> list[list[dict]]:
    """The first rows as the metric will get them, for a preview: each cell's text and
    its kind ("number", "json", "text", "empty", or "bad" for a value that does not fit
    its column's type, shown as the file has it)."""
    return [
        [_preview_cell(row.get(c), types.get(c, "text")) for c in dataset.columns]
        for row in dataset.preview
    ]


def _preview_cell(raw: object, declared: str) -> dict:
    try:
        value = dataset_files.typed_value(raw, declared)
    except DatasetError:
        return {"text": dataset_files.safe_cell(raw), "kind": "bad"}
    if value is None:
        return {"text": "", "kind": "empty"}
    if declared == "number":
        return {"text": str(value), "kind": "number"}
    if declared == "json":
        return {"text": dataset_files.as_json_text(value), "kind": "json"}
    # Made safe as a download is: a formula-like cell shows with its leading quote.
    return {"text": dataset_files.safe_cell(value), "kind": "text"}


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
        "types": column_types(draft.dataset, draft.column_types) if draft.dataset else {},
    }


def _facts_key(dataset_id: int, settings: dict) -> str:
    """The hash of the settings' effect: the check's fingerprint rests on it, so a change
    of anything here makes a check stale. Only the types of the columns the metric gets
    count: the type of an ignored column changes nothing a case holds."""
    roles = settings["roles"]
    used = {c: t for c, t in settings["types"].items() if roles.get(c) in ("input", "output")}
    keyed = {**settings, "ratios": list(settings["ratios"]), "types": used}
    text = json.dumps([dataset_id, keyed], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compute_facts(
    dataset: Dataset,
    *,
    roles: dict,
    mode: str,
    ratios: tuple,
    seed: int,
    column: str,
    types: dict[str, str],
) -> dict:
    """Everything the wizard needs to know about a dataset under these settings, read
    from every row once: the first problem (or None: a value that does not fit its
    column's type is one), the split counts, and the check's 3 sample cases, their values
    typed. Stored on the draft, so pages never read every row."""
    settings = {
        "roles": roles,
        "mode": mode,
        "ratios": ratios,
        "seed": seed,
        "column": column,
        "types": types,
    }
    facts: dict = {"key": _facts_key(dataset.pk, settings), "problem": None}
    try:
        table = table_of(dataset)
        cases = dataset_files.build_cases(table, roles, types)
        # The human columns reach no case: an evaluation compares them with the scores.
        human = dataset_files.human_settings(table, roles)
        for index, row in enumerate(table.rows):
            dataset_files.human_of_row(row, human, table.file_row(index))
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
    # Numbered from the first data row, as cases are everywhere: the same rows as CSV
    # and as JSON Lines read the same (a CSV's header is not a row).
    facts["sample_rows"] = [i + 1 for i in sample]
    return facts


def current_facts(draft: Draft) -> dict | None:
    """The stored facts when they belong to the draft's current settings (the services
    store them with every write that changes them), else fresh ones. A read: it never
    writes the draft."""
    if draft.dataset_id is None:
        return None
    settings = dataset_settings(draft)
    stored = draft.dataset_facts or {}
    key = _facts_key(draft.dataset_id, settings)
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
