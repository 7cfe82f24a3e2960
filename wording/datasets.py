"""Words for the dataset package's codes (dataset_files): the upload, its rows and
columns, the roles and the splits, and the warnings a preview shows."""

from __future__ import annotations

from collections.abc import Mapping

from django.template.defaultfilters import filesizeformat
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from wording.formatting import table_words

# A person's judgement of the row (dataset_files.human): compared with the metric's.
HUMAN_ROLE_NAMES = {
    "human_score": _("Human score"),
    "human_label": _("Human label"),
    "human_note": _("Human note"),
}

# dataset_files: the upload, its rows and columns, the roles and the splits.
DATASET_ERRORS = {
    "too_large": _("The file is %(size)s; the limit is %(limit)s."),
    "empty": _("The file is empty."),
    "not_text": _(
        "This is not a CSV or JSON Lines file (it looks like %(kind)s). "
        "Export it as CSV (UTF-8) and upload that."
    ),
    "undecodable": _(
        "The file's text encoding could not be recognized. Save it as UTF-8 and upload it again."
    ),
    "bad_json": _("Line %(row)s is not valid JSON (at character %(column)s: %(reason)s)."),
    "not_object": _("Line %(row)s is a JSON %(type)s; every line must be one JSON object."),
    "ragged_row": _("Row %(row)s has %(found)s cells; the header has %(expected)s columns."),
    "no_header": _(
        "The first row must name the columns; it holds numbers or blanks. Add a header row."
    ),
    "no_columns": _("The JSON objects have no keys, so there are no columns."),
    "no_rows": _("The file has a header but no rows."),
    "duplicate_column": _("Row %(row)s names the column %(name)s twice."),
    "empty_column_name": _("Column %(position)s has no name in row %(row)s."),
    "too_many_columns": _("Row %(row)s has %(count)s columns; the limit is %(limit)s."),
    "too_many_rows": _("The file has more than %(limit)s rows (row %(row)s)."),
    "unclosed_quote": _("A quoted cell that starts in row %(row)s never ends."),
    "bad_quote": _("Row %(row)s has text right after a closing quote (line %(line)s)."),
    "cell_too_large": _(
        "A cell in row %(row)s is longer than %(limit)s characters (line %(line)s)."
    ),
    "no_input_column": _("Mark at least one column as Input."),
    "unknown_column": _("There is no column named %(column)s."),
    "bad_role": _("%(role)s is not a role; use Input, Output or ignored."),
    "two_human_columns": _(
        "The columns %(other)s and %(column)s are both a %(role)s; mark only one of them so."
    ),
    "score_and_label": _(
        "Mark a human score or a human label, not both: %(column)s is the second one."
    ),
    "note_alone": _(
        "The human note %(column)s needs a human score or a human label column beside it."
    ),
    "bad_scale": _(
        "The scale of the human score %(column)s must go from a lower number to a higher "
        "one (it is %(lo)s to %(hi)s)."
    ),
    "too_few_classes": _(
        "The human label %(column)s needs at least two different values (pass and fail, "
        "for example); it has %(count)s."
    ),
    "too_many_classes": _(
        "The human label %(column)s has %(count)s different values; at most %(limit)s are "
        "read as labels. Is it a human score or a note?"
    ),
    "outside_scale": _(
        "Row %(row)s of the human score %(column)s holds %(value)s, outside its scale of "
        "%(lo)s to %(hi)s."
    ),
    "unknown_label": _(
        "Row %(row)s of the human label %(column)s holds “%(value)s”, which is none of its "
        "values (%(classes)s)."
    ),
    "bad_type": _("%(type)s is not a column type; use Number, Text or JSON."),
    "not_a_number": _(
        "Row %(row)s of the column %(column)s holds “%(value)s”, which is not a number "
        "(numbers are written like 7, -3, 2.5 or 1e3, without thousands separators). Fix "
        "the cell, or make the column's type Text."
    ),
    "not_json": _(
        "Row %(row)s of the column %(column)s holds “%(value)s”, which is not JSON. Fix "
        "the cell, or make the column's type Text."
    ),
    "bad_ratios": _(
        "The split percentages must be whole numbers of 0 or more that add up to 100, with train above 0."
    ),
    "unknown_split_value": _(
        "Row %(row)s says %(value)s in the column %(column)s; use train, validation or test."
    ),
    "empty_split_value": _("Row %(row)s has no value in the split column %(column)s."),
    # A user's datasets and their storage quota (submissions.storage); sizes in MB.
    "storage_quota": _(
        "This file needs at least %(size)s MB of storage, and your datasets already use "
        "%(used)s MB of your %(limit)s MB. Delete datasets you no longer need on the "
        "Datasets page, then upload it again."
    ),
    "dataset_in_use": _(
        "This dataset cannot be deleted while %(uses)s use it: they keep the file they ran on."
    ),
    "too_few_train_cases": ngettext_lazy(
        "The train split has %(count)s case; the contract check needs %(needed)s.",
        "The train split has %(count)s cases; the contract check needs %(needed)s.",
        "count",
    ),
}

DATASET_WARNINGS = {
    "formula_like_cells": ngettext_lazy(
        "%(count)s cell starts like a spreadsheet formula (=, +, - or @), for example row "
        "%(row)s, column %(column)s. It is kept as text and never evaluated.",
        "%(count)s cells start like a spreadsheet formula (=, +, - or @), for example row "
        "%(row)s, column %(column)s. They are kept as text and never evaluated.",
        "count",
    ),
    "encoding_guessed": _(
        "The file is not UTF-8; it was read as %(encoding)s. Check the preview for garbled letters."
    ),
}

# What keeps a dataset (dataset_in_use's "uses"), each counted.
DATASET_USES = {
    "evaluations": ngettext_lazy("%(count)s evaluation", "%(count)s evaluations", "count"),
    "runs": ngettext_lazy("%(count)s run", "%(count)s runs", "count"),
}
BOTH = _("%(first)s and %(second)s")

MEGABYTE = 1024 * 1024


def megabytes(size: object) -> str:
    """Bytes as megabytes in the reader's notation: one decimal place, none when whole."""
    value = round(size / MEGABYTE, 1) if isinstance(size, int | float) else 0
    places = 0 if value == int(value) else 1
    return number_format(value, decimal_pos=places, force_grouping=True)


def uses_words(uses: Mapping) -> str:
    """ "2 evaluations and 1 run": the uses counted above that are not 0."""
    parts = [
        str(words % {"count": uses[kind]})
        for kind, words in DATASET_USES.items()
        if isinstance(uses.get(kind), int) and uses[kind] > 0
    ]
    if len(parts) == 2:
        return str(BOTH % {"first": parts[0], "second": parts[1]})
    return parts[0] if parts else ""


BINARY_KINDS = {
    "zip": _("an Excel workbook or a zip archive"),
    "ole2": _("an old Excel or Word file"),
    "pdf": _("a PDF"),
    "gzip": _("a gzip archive"),
    "parquet": _("a Parquet file"),
    "unknown": _("a binary file"),
}

JSON_REASONS = {
    "expecting_value": _("a value was expected"),
    "expecting_property_name": _("a key in double quotes was expected"),
    "expecting_comma": _("a comma was expected"),
    "expecting_colon": _("a colon was expected"),
    "unterminated_string": _("a string is not closed"),
    "invalid_control_character": _("a control character inside a string"),
    "invalid_escape": _("an invalid escape"),
    "extra_data": _("there is text after the object"),
    "non_standard_constant": _("NaN and Infinity are not JSON"),
    "invalid_number": _("a number that is too long"),
    "too_deep": _("nested too deeply"),
    "syntax": _("a syntax error"),
}

JSON_TYPES = {
    "array": _("array"),
    "string": _("string"),
    "number": _("number"),
    "boolean": _("boolean"),
    "null": _("null"),
}


def dataset_error_words(code: str | None, params: Mapping) -> str:
    """A DatasetError's sentence; `params` carries its "row" and "column" when it has them."""
    params = {"row": None, "column": None, **params}
    if code == "not_text":
        params["kind"] = BINARY_KINDS.get(params.get("kind"), BINARY_KINDS["unknown"])
    if code == "bad_json":
        params["reason"] = JSON_REASONS.get(params.get("reason"), JSON_REASONS["syntax"])
    if code == "not_object":
        params["type"] = JSON_TYPES.get(params.get("type"), params.get("type"))
    if code == "too_large":
        params["size"] = filesizeformat(params.get("size", 0))
        params["limit"] = filesizeformat(params.get("limit", 0))
    if code == "storage_quota":
        for key in ("size", "used", "limit"):
            params[key] = megabytes(params.get(key))
    if code == "dataset_in_use":
        params["uses"] = uses_words(params)
    if code == "bad_role":
        params["role"] = str(params.get("role"))
    if code == "bad_type":
        params["type"] = str(params.get("type"))
    if code == "two_human_columns":
        params["role"] = HUMAN_ROLE_NAMES.get(params.get("role"), params.get("role"))
    for key in ("lo", "hi"):
        if isinstance(params.get(key), float):
            value = params[key]
            params[key] = number_format(int(value) if value.is_integer() else value)
    return table_words(DATASET_ERRORS, code, params)


def dataset_warning_words(code: str | None, params: Mapping) -> str:
    """A preview's warning; formula_like_cells names the first such cell."""
    params = dict(params)
    if code == "formula_like_cells":
        first = (params.get("cells") or [{}])[0]
        params.update(row=first.get("row"), column=first.get("column"))
    return table_words(DATASET_WARNINGS, code, params)
