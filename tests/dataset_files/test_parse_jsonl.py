"""JSON Lines: typed values, mixed keys, line numbers in errors."""

from __future__ import annotations

import json

import pytest

from dataset_files import parse_dataset


def _jsonl(*objects: object) -> bytes:
    return "\n".join(json.dumps(obj, ensure_ascii=False) for obj in objects).encode()


@pytest.mark.parametrize("filename", ["data.jsonl", "data.ndjson", "DATA.JSON-LINES", "data.txt"])
def test_jsonl_by_extension_or_sniffed(filename):
    table = parse_dataset(_jsonl({"q": "hi", "n": 1}), filename=filename)
    assert table.format == "jsonl"
    assert table.rows == [{"q": "hi", "n": 1}]
    assert table.delimiter is None


def test_values_keep_their_json_types():
    row = {"s": "text", "i": 3, "f": 0.5, "b": True, "z": None, "l": [1, "a"], "o": {"k": [2]}}
    table = parse_dataset(_jsonl(row), filename="data.jsonl")
    assert table.rows == [row]
    assert type(table.rows[0]["i"]) is int
    assert type(table.rows[0]["o"]) is dict


def test_mixed_keys_union_in_first_seen_order():
    data = _jsonl({"b": 1, "a": 2}, {"a": 3, "c": 4}, {"d": 5})
    table = parse_dataset(data, filename="data.jsonl")
    assert table.columns == ["b", "a", "c", "d"]
    assert table.rows == [
        {"b": 1, "a": 2, "c": None, "d": None},
        {"b": None, "a": 3, "c": 4, "d": None},
        {"b": None, "a": None, "c": None, "d": 5},
    ]


def test_blank_lines_crlf_and_line_numbers():
    data = b'\n{"a": 1}\r\n\r\n   \n{"a": 2}\r\n'
    table = parse_dataset(data, filename="data.jsonl")
    assert table.rows == [{"a": 1}, {"a": 2}]
    assert table.row_numbers == [2, 5]


def test_unicode_line_separator_inside_a_string():
    data = '{"text": "one\u2028two"}\n'.encode()
    table = parse_dataset(data, filename="data.jsonl")
    assert table.rows == [{"text": "one\u2028two"}]


@pytest.mark.parametrize(
    ("line", "reason", "column"),
    [
        ('{"a": }', "expecting_value", 7),
        ('{"a": 1,}', "expecting_property_name", 9),
        ('{"a" 1}', "expecting_colon", 6),
        ('{"a": 1 "b": 2}', "expecting_comma", 9),
        ('{"a": "open', "unterminated_string", 7),
        ('{"a": 1} x', "extra_data", 10),
        ('{"a": "\\q"}', "invalid_escape", 8),
    ],
)
def test_bad_json_names_line_column_and_reason(raises_code, line, reason, column):
    data = b'{"a": 0}\n\n' + line.encode() + b"\n"
    error = raises_code("bad_json", parse_dataset, data, filename="data.jsonl")
    assert error.row == 3
    assert error.column == column
    assert error.params == {"reason": reason}


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(raises_code, constant):
    data = f'{{"a": {constant}}}\n'.encode()
    error = raises_code("bad_json", parse_dataset, data, filename="data.jsonl")
    assert (error.row, error.params) == (1, {"reason": "non_standard_constant"})


def test_too_deep_and_too_long_numbers(raises_code):
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert raises_code("bad_json", parse_dataset, deep, filename="d.jsonl").params == {
        "reason": "too_deep"
    }
    long_number = b'{"a": ' + b"9" * 5000 + b"}"
    assert raises_code("bad_json", parse_dataset, long_number, filename="d.jsonl").params == {
        "reason": "invalid_number"
    }


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("[1, 2]", "array"),
        ('"text"', "string"),
        ("3", "number"),
        ("true", "boolean"),
        ("null", "null"),
    ],
)
def test_a_line_that_is_not_an_object(raises_code, line, kind):
    data = b'{"a": 1}\n' + line.encode() + b"\n"
    error = raises_code("not_object", parse_dataset, data, filename="data.jsonl")
    assert (error.row, error.params) == (2, {"type": kind})


def test_a_json_array_file_is_not_jsonl(raises_code):
    error = raises_code("not_object", parse_dataset, b'[{"a": 1}]', filename="data.json")
    assert error.params == {"type": "array"}


def test_repeated_key_in_a_row(raises_code):
    data = b'{"a": 1}\n{"a": 1, "b": 2, "a": 3}\n'
    error = raises_code("duplicate_column", parse_dataset, data, filename="data.jsonl")
    assert (error.row, error.column, error.params) == (2, "a", {"name": "a"})


def test_repeated_key_in_a_nested_object_is_the_values_business():
    data = b'{"a": {"x": 1, "x": 2}, "b": 1}\n'
    table = parse_dataset(data, filename="data.jsonl")
    assert table.rows == [{"a": {"x": 2}, "b": 1}]


def test_empty_key(raises_code):
    error = raises_code(
        "empty_column_name", parse_dataset, b'{"a": 1}\n{" ": 2}\n', filename="data.jsonl"
    )
    assert (error.row, error.params) == (2, {"position": 2})


def test_objects_without_keys(raises_code):
    raises_code("no_columns", parse_dataset, b"{}\n{}\n", filename="data.jsonl")


def test_too_many_columns_across_rows(raises_code):
    data = _jsonl({"a": 1, "b": 2}, {"c": 3})
    error = raises_code("too_many_columns", parse_dataset, data, filename="d.jsonl", max_columns=2)
    assert (error.row, error.params) == (2, {"count": 3, "limit": 2})


def test_too_many_rows(raises_code):
    data = _jsonl(*({"a": i} for i in range(4)))
    error = raises_code("too_many_rows", parse_dataset, data, filename="d.jsonl", max_rows=3)
    assert (error.row, error.params) == (4, {"limit": 3})
