"""File-level and CSV errors: each names what to fix, by code, row and parameters."""

from __future__ import annotations

import time

import pytest

from dataset_files import MAX_BYTES, parse_dataset


def test_a_50_mb_file_is_refused_fast(raises_code):
    data = b"a,b\n" + b"1,2\n" * (50 * 1024 * 1024 // 4)
    start = time.perf_counter()
    error = raises_code("too_large", parse_dataset, data, filename="huge.csv")
    assert time.perf_counter() - start < 0.05
    assert error.params == {"size": len(data), "limit": MAX_BYTES}


def test_the_limit_is_a_parameter(raises_code):
    error = raises_code("too_large", parse_dataset, b"a\n1\n", filename="a.csv", max_bytes=3)
    assert error.params == {"size": 4, "limit": 3}


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"  \r\n\n\t", " \n".encode("utf-16")])
def test_empty_files(raises_code, data):
    raises_code("empty", parse_dataset, data, filename="data.csv")


def test_empty_jsonl(raises_code):
    raises_code("empty", parse_dataset, b"\n\n", filename="data.jsonl")


def test_header_without_rows(raises_code):
    raises_code("no_rows", parse_dataset, b"question,answer\n\n", filename="data.csv")


@pytest.mark.parametrize(("bad", "found"), [("2,2,2", 3), ("2", 1)])
def test_ragged_row_names_row_and_counts(raises_code, bad, found):
    text = f"a,b\n1,1\n\n{bad}\n"
    error = raises_code("ragged_row", parse_dataset, text.encode(), filename="data.csv")
    assert error.row == 4
    assert error.params == {"expected": 2, "found": found, "line": 4}


def test_ragged_row_after_a_multiline_cell_gives_row_and_line(raises_code):
    text = 'a,b\n"one\ntwo",x\n1,2,3\n'
    error = raises_code("ragged_row", parse_dataset, text.encode(), filename="data.csv")
    assert error.row == 3
    assert error.params == {"expected": 2, "found": 3, "line": 4}


@pytest.mark.parametrize("text", ["1,2,3\n4,5,6\n", ",,\n", "0,5;1,25\n2;3\n"])
def test_no_header(raises_code, text):
    raises_code("no_header", parse_dataset, text.encode(), filename="data.csv")


def test_duplicate_column(raises_code):
    error = raises_code(
        "duplicate_column", parse_dataset, b"id,text,id \n1,a,2\n", filename="data.csv"
    )
    assert error.row == 1
    assert error.column == "id"
    assert error.params == {"name": "id", "positions": [1, 3]}


def test_empty_column_name(raises_code):
    error = raises_code("empty_column_name", parse_dataset, b"a,,c\n1,2,3\n", filename="data.csv")
    assert (error.row, error.params) == (1, {"position": 2})


def test_too_many_columns(raises_code):
    header = ",".join(f"c{i}" for i in range(201))
    data = f"{header}\n{','.join('1' * 201)}\n".encode()
    error = raises_code("too_many_columns", parse_dataset, data, filename="wide.csv")
    assert error.params == {"count": 201, "limit": 200}


def test_too_many_rows(raises_code):
    data = b"a\n" + b"x\n" * 200_001
    error = raises_code("too_many_rows", parse_dataset, data, filename="long.csv")
    assert error.params == {"limit": 200_000}
    assert error.row == 200_002


def test_exactly_the_row_limit_is_fine():
    table = parse_dataset(b"a\n" + b"x\n" * 5, filename="a.csv", max_rows=5)
    assert len(table.rows) == 5


def test_unclosed_quote_names_where_it_opened(raises_code):
    text = 'a,b\n1,2\n"never closed,3\n4,5\n'
    error = raises_code("unclosed_quote", parse_dataset, text.encode(), filename="data.csv")
    assert (error.row, error.params) == (3, {"line": 3})


def test_text_after_a_closing_quote(raises_code):
    text = 'a,b\n1,2\n"quoted" then more,3\n'
    error = raises_code("bad_quote", parse_dataset, text.encode(), filename="data.csv")
    assert (error.row, error.params) == (3, {"line": 3})


def test_a_cell_over_the_csv_field_limit(raises_code):
    text = "a,b\n1," + "x" * 200_000 + "\n"
    error = raises_code("cell_too_large", parse_dataset, text.encode(), filename="data.csv")
    assert error.row == 2
    assert error.params["limit"] == 131072


def test_as_dict_is_json_ready(raises_code):
    error = raises_code("ragged_row", parse_dataset, b"a,b\n1\n", filename="data.csv")
    assert error.as_dict() == {
        "code": "ragged_row",
        "row": 2,
        "column": None,
        "params": {"expected": 2, "found": 1, "line": 2},
    }
