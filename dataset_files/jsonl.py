"""JSON Lines text to columns and rows: one object a line, values keep their JSON types."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from dataset_files.errors import DatasetError
from dataset_files.formulas import PLAIN_FIRST, FormulaScan

# The decoder only words its errors; these prefixes map them to codes.
_REASONS = (
    ("Expecting value", "expecting_value"),
    ("Expecting property name", "expecting_property_name"),
    ("Expecting ',' delimiter", "expecting_comma"),
    ("Expecting ':' delimiter", "expecting_colon"),
    ("Unterminated string", "unterminated_string"),
    ("Invalid control character", "invalid_control_character"),
    ("Invalid \\", "invalid_escape"),
    ("Extra data", "extra_data"),
)
_TYPES = ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"))


@dataclass
class JsonlData:
    columns: list[str]
    rows: list[dict[str, object]]
    row_numbers: list[int]
    scan: FormulaScan = field(default_factory=FormulaScan)


class _NonStandardConstant(ValueError):
    pass


def _reject_constant(name: str) -> None:
    # NaN and Infinity are not JSON, though Python's json accepts them; a
    # database's JSON column would not store them.
    raise _NonStandardConstant(name)


def parse_jsonl(text: str, *, max_rows: int, max_columns: int) -> JsonlData:
    """Rows are numbered by line (1-based); blank lines are skipped.

    Rows may have different keys: the columns are their union in first-seen
    order, and a row lacking a column holds None there.
    """
    columns: dict[str, None] = {}
    objects: list[dict] = []
    data = JsonlData([], [], [])
    decoder = _LineDecoder()
    # Split on "\n" only: str.splitlines() would also split inside JSON
    # strings holding U+2028 and friends, which JSON allows unescaped.
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        obj = decoder.load(raw, line)
        if len(objects) == max_rows:
            raise DatasetError("too_many_rows", row=line, params={"limit": max_rows})
        for key, value in obj.items():
            if key not in columns:
                _new_column(key, line, len(columns), max_columns)
                columns[key] = None
            # The string test first keeps the per-value cost low on a big file.
            if isinstance(value, str) and value[:1] not in PLAIN_FIRST:
                data.scan.check(value, line, key)
        objects.append(obj)
        data.row_numbers.append(line)
    if not columns:
        raise DatasetError("no_columns")
    data.columns = list(columns)
    data.rows = [{name: obj.get(name) for name in data.columns} for obj in objects]
    return data


def _new_column(key: str, line: int, count: int, max_columns: int) -> None:
    if not key.strip():
        raise DatasetError("empty_column_name", row=line, params={"position": count + 1})
    if count + 1 > max_columns:
        raise DatasetError(
            "too_many_columns", row=line, params={"count": count + 1, "limit": max_columns}
        )


class _LineDecoder:
    """One decoder for the whole file: building one a line cost a fifth of the time."""

    def __init__(self) -> None:
        self.repeated: str | None = None
        self._decoder = json.JSONDecoder(
            object_pairs_hook=self._pairs, parse_constant=_reject_constant
        )

    def _pairs(self, items: list[tuple[str, object]]) -> dict:
        # The hook runs for every object, innermost first, so after a parse it
        # holds the top-level object's repeated key (json keeps the last value
        # silently; a repeated column is the user's mistake to see).
        obj = dict(items)
        self.repeated = None if len(obj) == len(items) else _first_repeat(items)
        return obj

    def load(self, raw: str, line: int) -> dict:
        try:
            obj = self._decoder.decode(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                "bad_json", row=line, column=exc.colno, params={"reason": _reason(exc.msg)}
            ) from None
        except _NonStandardConstant:
            raise DatasetError(
                "bad_json", row=line, params={"reason": "non_standard_constant"}
            ) from None
        except ValueError:  # an integer longer than Python converts
            raise DatasetError("bad_json", row=line, params={"reason": "invalid_number"}) from None
        except RecursionError:
            raise DatasetError("bad_json", row=line, params={"reason": "too_deep"}) from None
        if not isinstance(obj, dict):
            raise DatasetError("not_object", row=line, params={"type": _type_name(obj)})
        if self.repeated is not None:
            raise DatasetError(
                "duplicate_column", row=line, column=self.repeated, params={"name": self.repeated}
            )
        return obj


def _first_repeat(items: list[tuple[str, object]]) -> str:
    seen: set[str] = set()
    for key, _ in items:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no repeated key")  # only called when dict() lost a key


def _reason(message: str) -> str:
    for prefix, reason in _REASONS:
        if message.startswith(prefix):
            return reason
    return "syntax"


def _type_name(value: object) -> str:
    for types, name in _TYPES:
        if isinstance(value, types):
            return name
    return "null"
