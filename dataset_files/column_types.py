"""Each column's type (number, text or JSON): read from its values, then the value a
metric gets under the type a user declared.

A CSV file holds text and a JSON Lines file holds JSON values, so the same answer would
reach a metric as "7" from one and as 7 from the other. A column's type says what its
values are whatever the file, so that the same declared type gives the same Python types
from both formats:

- number: int when written without a point or an exponent ("7", 7, "-3"), float
  otherwise ("7.0", 7.0, "2.5", "1e3" are floats). A number as read has no thousands
  separator and no decimal comma ("1,234" and "2,5" are text: which one is meant depends
  on the locale), no leading zero ("007" is a code) and is finite ("nan", "inf" are
  text). Declared a number, a cell with leading zeros is read as one ("007" is 7).
  true and false are never numbers.
- text: str. A JSON value that is not a string becomes its compact JSON text (7 is "7",
  true is "true", {"a": 1} is '{"a":1}').
- json: the value as JSON: a JSON Lines value as it is, a CSV cell's text parsed
  ('{"a": 1}' is {"a": 1}, "true" is True, "7" is 7). As read, a column is JSON when
  every value is an object, an array or true/false (with numbers among them or not): a
  column of true and false reaches the metric as booleans from either file.

An empty value (a missing key, null, a cell of nothing or only spaces) is None under
every type, from both formats.
"""

from __future__ import annotations

import json
import math
import re

from dataset_files.errors import DatasetError
from dataset_files.table import Table

COLUMN_TYPES: tuple[str, ...] = ("number", "text", "json")

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# A number as read: no leading zero ("007" is a code).
_NUMBER_AS_READ = re.compile(r"[+-]?(?:(?:0|[1-9]\d*)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
# Past these, int() or float() may refuse a literal (too many digits, past the largest
# float): only such literals are converted to be sure.
_SAFE_DIGITS = 300
_BOOLEANS = ("true", "false")
# What an error quotes of the value at most, in characters.
SHOWN_CHARS = 60


def is_empty(value: object) -> bool:
    # A spreadsheet cell holding only a stray space is no value.
    return value is None or (isinstance(value, str) and not value.strip())


# -- the type as read ---------------------------------------------------------------


def infer_types(table: Table) -> dict[str, str]:
    """Each column's type as read from every row: "number" when every non-empty value is
    a number, "json" when every one is an object, an array, true or false (or a number),
    else "text". A column with no value at all is "text".

    A CSV cell is read for what its text spells; a JSON Lines value keeps its JSON type
    (a JSON string is text, whatever it spells)."""
    kind_of = _cell_kind if table.format == "csv" else _json_kind
    types = {}
    for column in table.columns:
        kinds: set[str] = set()
        for row in table.rows:
            value = row.get(column)
            if is_empty(value):
                continue
            kinds.add(kind_of(value))
            if "text" in kinds:
                break  # nothing read later can change it
        types[column] = _type_of(kinds)
    return types


def _type_of(kinds: set[str]) -> str:
    if kinds == {"number"}:
        return "number"
    if kinds and kinds <= {"number", "boolean", "structure"}:
        return "json"
    return "text"


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number" if _finite(value) else "text"
    if isinstance(value, dict | list):
        return "structure"
    return "text"


def _cell_kind(value: object) -> str:
    if not isinstance(value, str):
        return _json_kind(value)
    text = value.strip()
    if _NUMBER_AS_READ.fullmatch(text):
        plain = len(text) < _SAFE_DIGITS and "e" not in text and "E" not in text
        return "number" if plain or _parses(text) else "text"
    if text in _BOOLEANS:
        return "boolean"
    if text[:1] in ("{", "[") and isinstance(_loads(text), dict | list):
        return "structure"
    return "text"


def _parses(text: str) -> bool:
    try:
        _number_of(text)
    except ValueError:
        return False
    return True


# -- the value under a declared type ------------------------------------------------


def typed_value(raw: object, declared_type: str) -> object:
    """The value a metric gets for `raw` (as read from either format) under
    `declared_type`: None when it is empty; DatasetError bad_type for a type that is not
    one of COLUMN_TYPES, not_a_number or not_json (params: value, as the file has it,
    cut short) for a value that does not fit. The caller adds the row and column."""
    if declared_type not in COLUMN_TYPES:
        raise DatasetError("bad_type", params={"type": str(declared_type)})
    if is_empty(raw):
        return None
    if declared_type == "number":
        return _number(raw)
    if declared_type == "json":
        return _json(raw)
    return raw if isinstance(raw, str) else as_json_text(raw)


def as_json_text(value: object) -> str:
    """A JSON value as compact JSON text, unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _number(raw: object) -> int | float:
    if isinstance(raw, bool):
        raise DatasetError("not_a_number", params={"value": shown(raw)})
    if isinstance(raw, int | float) and _finite(raw):
        return raw
    if isinstance(raw, str):
        try:
            return _number_of(raw.strip())
        except ValueError:
            pass
    raise DatasetError("not_a_number", params={"value": shown(raw)})


def _number_of(text: str) -> int | float:
    """The number `text` spells; ValueError for text that is no number literal, or one
    Python cannot hold (more digits than int() converts, a float past the largest)."""
    if _INTEGER.fullmatch(text):
        return int(text)
    if not _NUMBER.fullmatch(text):
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _json(raw: object) -> object:
    if isinstance(raw, str):
        value = _loads(raw.strip())
        if value is not _INVALID:
            return value
    elif not isinstance(raw, float) or _finite(raw):
        return raw
    raise DatasetError("not_json", params={"value": shown(raw)})


_INVALID = object()


def _reject_constant(name: str) -> None:
    # NaN and Infinity are not JSON, though Python's json reads them.
    raise ValueError(name)


# One decoder for every cell: json.loads with an option builds one a call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(text: str) -> object:
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return _INVALID


def _finite(value: int | float) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def shown(value: object) -> str:
    """The value as a message quotes it: its text, or its JSON, cut short."""
    text = value if isinstance(value, str) else as_json_text(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


# -- a row's values -----------------------------------------------------------------


def check_types(columns: list[str], types: dict[str, str]) -> None:
    """DatasetError unknown_column or bad_type for a type that cannot be used."""
    known = set(columns)
    for column, declared in types.items():
        if column not in known:
            raise DatasetError("unknown_column", column=column)
        if declared not in COLUMN_TYPES:
            raise DatasetError("bad_type", column=column, params={"type": str(declared)})


def cell_value(row: dict, column: str, types: dict[str, str] | None, file_row: int | None):
    """Row `row`'s value of `column` under its type in `types`; as read when `types` is
    None or does not name the column. A value that does not fit is a DatasetError naming
    `file_row` and the column."""
    raw = row.get(column)
    if types is None or column not in types:
        return raw
    try:
        return typed_value(raw, types[column])
    except DatasetError as exc:
        raise DatasetError(exc.code, row=file_row, column=column, params=exc.params) from None
