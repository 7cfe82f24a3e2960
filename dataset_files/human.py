"""A person's judgement of each row: the human columns, and how their values are read.

A dataset can carry what a person thought of each row beside what the metric gets: a
**human score** (a number on a declared scale, such as 1 to 5), or a **human label**
(pass/fail, or a few ordered categories such as bad, ok, good), and optionally a **human
note** (text saying why). They reach neither the metric nor the artifact: an evaluation
compares them with the metric's scores (contract.agreement).

`human_settings` reads the columns once (the scale a score is on, the label's classes,
lowest first), a user's declarations over what it finds; `human_of_row` reads one row
under those settings. Everything reports codes (DatasetError), as the rest of the
package does.
"""

from __future__ import annotations

import math

from dataset_files.column_types import is_empty, typed_value
from dataset_files.errors import DatasetError
from dataset_files.table import Table

HUMAN_ROLES: tuple[str, ...] = ("human_score", "human_label", "human_note")
# Label values read as pass/fail, the failing one first: the metric's verdict is the
# second when its score reaches the threshold.
BINARY_PAIRS: tuple[tuple[str, str], ...] = (
    ("fail", "pass"),
    ("0", "1"),
    ("false", "true"),
    ("no", "yes"),
    ("incorrect", "correct"),
    ("wrong", "right"),
    ("bad", "good"),
    ("reject", "accept"),
    ("negative", "positive"),
    ("n", "y"),
)
MAX_CLASSES = 10
NOTE_CHARS = 2000  # of a note, kept with each case
METRIC_RANGE = (0.0, 1.0)  # what a metric's scores are read on, unless declared


def human_columns(roles: dict[str, str]) -> dict[str, str]:
    """{role: column} of the human columns `roles` names. At most one column a role, a
    score or a label but not both, and a note only beside one of them."""
    found: dict[str, str] = {}
    for column, role in roles.items():
        if role not in HUMAN_ROLES:
            continue
        if role in found:
            raise DatasetError(
                "two_human_columns", column=column, params={"other": found[role], "role": role}
            )
        found[role] = column
    if "human_score" in found and "human_label" in found:
        raise DatasetError("score_and_label", column=found["human_label"])
    if "human_note" in found and len(found) == 1:
        raise DatasetError("note_alone", column=found["human_note"])
    return found


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _number_or_none(raw: object) -> float | None:
    """A cell's number; None when it is empty or not a number (its row says so later)."""
    try:
        value = typed_value(raw, "number")
    except DatasetError:
        return None
    return None if value is None else float(value)


def label_classes(values: list[object]) -> list[str]:
    """A label column's classes as read, lowest first: a pair that reads as pass/fail
    with the failing one first, numbers in their order, else in alphabetical order."""
    seen: dict[str, str] = {}
    for value in values:
        if not is_empty(value):
            seen.setdefault(_text(value).casefold(), _text(value))
    folded = set(seen)
    for low, high in BINARY_PAIRS:
        if folded == {low, high}:
            return [seen[low], seen[high]]
    try:
        return sorted(seen.values(), key=float)
    except ValueError:
        return sorted(seen.values(), key=str.casefold)


def human_role_of(values: list[object]) -> str:
    """The role of a column a user called just "human": a score when its values are
    numbers, more than two of them different (1 to 5); else a label (pass/fail, 0/1)."""
    numbers = {_number_or_none(value) for value in values if not is_empty(value)}
    if None not in numbers and len(numbers) > 2:
        return "human_score"
    return "human_label"


def parse_classes(text: str) -> list[str]:
    """Classes as a user lists them ("bad, ok, good"), lowest first."""
    return [part.strip() for part in text.split(",") if part.strip()]


def human_settings(
    table: Table,
    roles: dict[str, str],
    *,
    scale: tuple[float, float] | None = None,
    classes: list[str] | None = None,
    threshold: float | None = None,
) -> dict:
    """How the human columns of `roles` are read: {} when there are none, else
    {"score_column" | "label_column", "note_column" (or ""), "scale" (a score's) or
    "classes" (a label's, lowest first), "threshold"}. A declared scale, classes or
    threshold wins over what the rows show."""
    found = human_columns(roles)
    if not found:
        return {}
    known = set(table.columns)
    for column in found.values():
        if column not in known:
            raise DatasetError("unknown_column", column=column)
    settings: dict = {"note_column": found.get("human_note", "")}
    middle = (METRIC_RANGE[0] + METRIC_RANGE[1]) / 2
    settings["threshold"] = middle if threshold is None else float(threshold)
    if "human_score" in found:
        column = found["human_score"]
        settings["score_column"] = column
        if scale is None:
            numbers = [
                float(number)
                for number in map(_number_or_none, (row.get(column) for row in table.rows))
                if number is not None
            ]
            scale = (min(numbers), max(numbers)) if numbers else (0.0, 1.0)
        lo, hi = float(scale[0]), float(scale[1])
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise DatasetError("bad_scale", column=column, params={"lo": lo, "hi": hi})
        settings["scale"] = [lo, hi]
    else:
        column = found["human_label"]
        settings["label_column"] = column
        if not classes:
            classes = label_classes([row.get(column) for row in table.rows])
        classes = list(dict.fromkeys(classes))
        if len(classes) < 2:
            raise DatasetError("too_few_classes", column=column, params={"count": len(classes)})
        if len(classes) > MAX_CLASSES:
            raise DatasetError(
                "too_many_classes",
                column=column,
                params={"count": len(classes), "limit": MAX_CLASSES},
            )
        settings["classes"] = classes
    return settings


def human_of_row(row: dict, settings: dict, file_row: int | None = None) -> dict | None:
    """The row's human values under `settings`: {"score": number} or {"label": class},
    and "note"; None when the row holds none (a row nobody labelled). A score outside
    its scale, or a label that is none of the classes, is a DatasetError naming the row."""
    if not settings:
        return None
    found: dict = {}
    score_column = settings.get("score_column")
    if score_column:
        raw = row.get(score_column)
        try:
            value = typed_value(raw, "number")
        except DatasetError as exc:
            raise DatasetError(
                exc.code, row=file_row, column=score_column, params=exc.params
            ) from None
        if value is not None:
            lo, hi = settings["scale"]
            if not lo <= float(value) <= hi:
                raise DatasetError(
                    "outside_scale",
                    row=file_row,
                    column=score_column,
                    params={"value": _text(raw)[:60], "lo": lo, "hi": hi},
                )
            found["score"] = float(value)
    label_column = settings.get("label_column")
    if label_column:
        raw = row.get(label_column)
        if not is_empty(raw):
            by_fold = {c.casefold(): c for c in settings["classes"]}
            label = by_fold.get(_text(raw).casefold())
            if label is None:
                raise DatasetError(
                    "unknown_label",
                    row=file_row,
                    column=label_column,
                    params={"value": _text(raw)[:60], "classes": ", ".join(settings["classes"])},
                )
            found["label"] = label
    note_column = settings.get("note_column")
    if note_column:
        raw = row.get(note_column)
        if not is_empty(raw):
            found["note"] = _text(raw)[:NOTE_CHARS]
    return found or None
