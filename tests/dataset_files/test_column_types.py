"""Column types: each column's type as read, and the values a metric gets under a declared
type, the same Python types from a CSV file and a JSON Lines file of the same data."""

from __future__ import annotations

import json

import pytest

from dataset_files import (
    COLUMN_TYPES,
    ERROR_CODES,
    Table,
    build_cases,
    case_of_row,
    infer_types,
    parse_dataset,
    typed_value,
)

# The same data twice: a CSV file as a spreadsheet writes it, and JSON Lines as a program
# writes it. Row 3 leaves every column but id and price empty.
SAME_CSV = (
    "id,answer,price,meta,ok,code,note\n"
    '1,7,2.5,"{""a"": 1}",true,007,hi\n'
    "2,-3,1e3,[1],false,012,\n"
    '3,,7.0,,,,"1,234"\n'
)
SAME_JSONL = (
    '{"id": 1, "answer": 7, "price": 2.5, "meta": {"a": 1}, "ok": true, "code": "007", '
    '"note": "hi"}\n'
    '{"id": 2, "answer": -3, "price": 1e3, "meta": [1], "ok": false, "code": "012", '
    '"note": null}\n'
    '{"id": 3, "price": 7.0, "note": "1,234"}\n'
)
AS_READ = {
    "id": "number",
    "answer": "number",
    "price": "number",
    "meta": "json",
    "ok": "json",
    "code": "text",
    "note": "text",
}


def csv_table(text: str) -> Table:
    return parse_dataset(text.encode(), filename="data.csv")


def jsonl_table(text: str) -> Table:
    return parse_dataset(text.encode(), filename="data.jsonl")


def column_of_csv(*cells: str) -> str:
    return "x\n" + "".join(f'"{cell}"\n' if "," in cell else f"{cell}\n" for cell in cells)


def as_read_csv(*cells: str) -> str:
    return infer_types(csv_table(column_of_csv(*cells)))["x"]


def as_read_jsonl(*values: object) -> str:
    text = "".join(json.dumps({"x": value, "y": 1}) + "\n" for value in values)
    return infer_types(jsonl_table(text))["x"]


# -- the type as read --------------------------------------------------------------


def test_both_formats_read_the_same_types_from_the_same_data():
    assert infer_types(csv_table(SAME_CSV)) == AS_READ
    assert infer_types(jsonl_table(SAME_JSONL)) == AS_READ


@pytest.mark.parametrize(
    "cells",
    [("7", "-3", "2.5", "1e3"), ("+4", ".5", "0", "0.25"), ("1E-2", " 12 ", "-0"), ("7", "")],
)
def test_csv_numeric_literals_read_as_numbers(cells):
    assert as_read_csv(*cells) == "number"


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        ("1,234", "a thousands separator, or a decimal comma: the locale decides"),
        ("2,5", "a decimal comma"),
        ("007", "a code, whose zeros matter"),
        ("-012", "a code, whose zeros matter"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("1e999", "past the largest float"),
        ("0x1F", "hexadecimal is for programs"),
        ("1_000", "Python's digit separator is not a spreadsheet's"),
        ("7 kg", "a quantity with its unit"),
    ],
)
def test_csv_cells_that_only_look_numeric_keep_the_column_text(cell, why):
    assert as_read_csv("7", cell) == "text", why


def test_json_numbers_read_as_numbers_and_json_strings_as_text():
    assert as_read_jsonl(7, -3, 2.5, 1e3) == "number"
    # A JSON string is text whatever it spells: the file's author chose a string.
    assert as_read_jsonl(7, "8") == "text"


@pytest.mark.parametrize(
    "cells",
    [
        ('{"a": 1}', "[1, 2]"),
        ("true", "false"),
        ("true", "[]", "3"),  # numbers among JSON values: still JSON
    ],
)
def test_csv_objects_arrays_and_booleans_read_as_json(cells):
    assert as_read_csv(*cells) == "json"


def test_json_objects_arrays_and_booleans_read_as_json():
    assert as_read_jsonl({"a": 1}, [1, 2], None) == "json"
    assert as_read_jsonl(True, False) == "json"
    assert as_read_jsonl(True, 1) == "json"  # true is never a number


@pytest.mark.parametrize(
    "cells",
    [
        ("{not json}", '{"a": 1}'),
        ("True", "False"),  # a spreadsheet's booleans are not JSON's
        ('{"a": 1}', "hello"),
        ("null", "[1]"),
    ],
)
def test_anything_else_reads_as_text(cells):
    assert as_read_csv(*cells) == "text"


def test_a_column_with_no_value_reads_as_text():
    assert infer_types(csv_table("x,y\n,1\n ,2\n"))["x"] == "text"
    assert as_read_jsonl(None, None) == "text"


# -- a value under a declared type -------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("7", 7),
        (7, 7),
        ("-3", -3),
        ("+4", 4),
        ("007", 7),  # declared a number, a code's zeros are dropped
        (" 12 ", 12),
        ("7.0", 7.0),
        (7.0, 7.0),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        (1e3, 1000.0),
        ("12345678901234567890", 12345678901234567890),
    ],
)
def test_a_number_is_an_int_when_written_without_point_or_exponent(raw, value):
    got = typed_value(raw, "number")
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("hi", "hi"),
        (" spaced ", " spaced "),
        ("7", "7"),
        (7, "7"),
        (2.5, "2.5"),
        (True, "true"),
        ({"a": 1, "b": "é"}, '{"a":1,"b":"é"}'),
        ([1, "x"], '[1,"x"]'),
    ],
)
def test_text_is_a_str_and_a_json_value_its_compact_json(raw, value):
    assert typed_value(raw, "text") == value


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ({"a": 1}, {"a": 1}),
        (" [1, 2] ", [1, 2]),
        ([1, 2], [1, 2]),
        ("true", True),
        (True, True),
        ("7", 7),
        (7, 7),
        ('"quoted"', "quoted"),
    ],
)
def test_json_is_the_value_parsed(raw, value):
    got = typed_value(raw, "json")
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("declared", COLUMN_TYPES)
@pytest.mark.parametrize("raw", [None, "", "   "])
def test_an_empty_value_is_none_under_every_type(declared, raw):
    assert typed_value(raw, declared) is None


@pytest.mark.parametrize(
    "raw", ["n/a", "1,234", "2,5", "nan", "inf", "1e999", "0x1F", True, False, {"a": 1}, [1]]
)
def test_what_is_no_number_is_refused(raises_code, raw):
    error = raises_code("not_a_number", typed_value, raw, "number")
    expected = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
    assert error.params["value"] == expected


@pytest.mark.parametrize("raw", ["hello", "{a: 1}", "NaN", "[1, 2"])
def test_what_is_no_json_is_refused(raises_code, raw):
    assert raises_code("not_json", typed_value, raw, "json").params == {"value": raw}


def test_a_long_value_is_quoted_cut_short(raises_code):
    error = raises_code("not_a_number", typed_value, "x" * 500, "number")
    assert len(error.params["value"]) == 60 and error.params["value"].endswith("…")


@pytest.mark.parametrize("declared", ["Number", "int", "", None])
def test_a_type_that_is_not_one_is_refused(raises_code, declared):
    assert raises_code("bad_type", typed_value, "7", declared).params == {"type": str(declared)}


# -- cases: the same Python values from both formats --------------------------------

# id ignored, answer the expected value, every other column an input.
ROLES = {c: "input" for c in AS_READ} | {"id": "ignore", "answer": "output"}


def _shape(value: object, *, values: bool = True) -> object:
    """A value with its types spelled out, so 7 and 7.0 and True never compare equal;
    values=False keeps only the types."""
    if isinstance(value, dict):
        return {key: _shape(item, values=values) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item, values=values) for item in value]
    return (type(value).__name__, value) if values else type(value).__name__


@pytest.mark.parametrize("declared", ["as read", *COLUMN_TYPES])
def test_csv_and_jsonl_give_the_metric_the_same_python_values(declared):
    csv_data, jsonl_data = csv_table(SAME_CSV), jsonl_table(SAME_JSONL)
    if declared == "as read":
        types = dict(AS_READ)
    else:
        # Every column that fits the type gets it; the others keep theirs as read.
        types = {}
        for column, as_read in AS_READ.items():
            try:
                for row in csv_data.rows:
                    typed_value(row[column], declared)
            except Exception:
                types[column] = as_read
            else:
                types[column] = declared
    from_csv = build_cases(csv_data, ROLES, types)
    from_jsonl = build_cases(jsonl_data, ROLES, types)
    # The same Python types everywhere; the same values too, but for text, which keeps a
    # CSV cell as written where a JSON value becomes its JSON ('{"a": 1}' and '{"a":1}').
    same_values = declared != "text"
    assert [_shape(case, values=same_values) for case in from_csv] == [
        _shape(case, values=same_values) for case in from_jsonl
    ]


def test_the_types_as_read_give_the_metric_numbers_json_and_none():
    cases = build_cases(csv_table(SAME_CSV), ROLES, AS_READ)
    assert cases[0] == {
        "input": {
            "price": 2.5,
            "meta": {"a": 1},
            "ok": True,
            "code": "007",
            "note": "hi",
        },
        "output": None,
        "expected": {"answer": 7},
    }
    assert cases[1]["input"]["price"] == 1000.0 and cases[1]["input"]["note"] is None
    # Row 3's answer is empty: no reference, as before types.
    assert cases[2]["expected"] is None


def test_a_text_declared_number_column_gives_strs_from_both_formats():
    types = {**AS_READ, "answer": "text", "price": "text"}
    for table in (csv_table(SAME_CSV), jsonl_table(SAME_JSONL)):
        cases = build_cases(table, ROLES, types)
        assert cases[0]["expected"] == {"answer": "7"}
        assert cases[1]["input"]["price"] in ("1e3", "1000.0")  # as written, or as JSON


def test_without_types_the_values_stay_as_read():
    cases = build_cases(csv_table(SAME_CSV), ROLES)
    assert cases[0]["expected"] == {"answer": "7"} and cases[0]["input"]["meta"] == '{"a": 1}'


def test_a_column_the_types_do_not_name_stays_as_read():
    cases = build_cases(csv_table(SAME_CSV), ROLES, {"answer": "number"})
    assert cases[0]["expected"] == {"answer": 7} and cases[0]["input"]["price"] == "2.5"


def test_a_recorded_output_gets_its_columns_type():
    row = {"q": "hi", "out": "42", "gold": "42"}
    case = case_of_row(row, ["q"], ["gold"], "out", types={"out": "number", "gold": "number"})
    assert case == {"input": {"q": "hi"}, "output": 42, "expected": {"gold": 42}}


# -- a value that does not fit: which row, which column -------------------------------


def test_a_csv_cell_that_is_no_number_names_its_spreadsheet_row(raises_code):
    table = csv_table("q,answer\na,7\nb,n/a\n")
    error = raises_code(
        "not_a_number",
        build_cases,
        table,
        {"q": "input", "answer": "output"},
        {"q": "text", "answer": "number"},
    )
    assert (error.row, error.column, error.params) == (3, "answer", {"value": "n/a"})


def test_a_jsonl_value_that_is_no_number_names_its_line(raises_code):
    table = jsonl_table('{"q": "a", "answer": 7}\n\n{"q": "b", "answer": true}\n')
    error = raises_code(
        "not_a_number",
        build_cases,
        table,
        {"q": "input", "answer": "output"},
        {"q": "text", "answer": "number"},
    )
    assert (error.row, error.column, error.params) == (3, "answer", {"value": "true"})


def test_a_csv_cell_that_is_no_json_names_its_row(raises_code):
    table = csv_table('q,meta\na,"{""a"": 1}"\nb,{oops}\n')
    error = raises_code(
        "not_json", build_cases, table, {"q": "input", "meta": "input"}, {"meta": "json"}
    )
    assert (error.row, error.column, error.params) == (3, "meta", {"value": "{oops}"})


def test_an_ignored_column_is_never_converted():
    table = csv_table("q,notes\na,n/a\n")
    assert build_cases(table, {"q": "input"}, {"q": "text", "notes": "number"})[0]["input"] == {
        "q": "a"
    }


def test_types_of_unknown_columns_or_no_type_are_refused(raises_code):
    table = csv_table(SAME_CSV)
    error = raises_code("unknown_column", build_cases, table, ROLES, {"nope": "text"})
    assert error.column == "nope"
    error = raises_code("bad_type", build_cases, table, ROLES, {"answer": "integer"})
    assert (error.column, error.params) == ("answer", {"type": "integer"})


def test_the_type_codes_are_listed():
    assert {"bad_type", "not_a_number", "not_json"} <= set(ERROR_CODES)
