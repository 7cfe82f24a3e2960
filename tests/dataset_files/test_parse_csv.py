"""Good CSV files: delimiters, quoting, BOM, blank rows, row numbers."""

from __future__ import annotations

import pytest

from dataset_files import parse_dataset


@pytest.mark.parametrize(
    ("text", "delimiter"),
    [
        ("question,label\nhello,greeting\nbye,farewell\n", ","),
        ("question;label\nhello;greeting\nbye;farewell\n", ";"),
        ("question\tlabel\nhello\tgreeting\nbye\tfarewell\n", "\t"),
    ],
)
def test_delimiters_are_sniffed(text, delimiter):
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.format == "csv"
    assert table.delimiter == delimiter
    assert table.columns == ["question", "label"]
    assert table.rows == [
        {"question": "hello", "label": "greeting"},
        {"question": "bye", "label": "farewell"},
    ]
    assert table.warnings == []


def test_semicolon_file_with_decimal_commas():
    # Commas inside the cells must not win over the semicolon that splits them.
    text = "price;weight\n1,5;2,25\n3,0;4,75\n"
    table = parse_dataset(text.encode(), filename="prices.csv")
    assert table.delimiter == ";"
    assert table.rows[0] == {"price": "1,5", "weight": "2,25"}


def test_tab_file_with_commas_in_text():
    text = "text\tlabel\nhello, world\tgreeting\nwell, well\tsurprise\n"
    table = parse_dataset(text.encode(), filename="data.tsv")
    assert table.delimiter == "\t"
    assert table.rows[1] == {"text": "well, well", "label": "surprise"}


def test_quoted_newlines_and_quotes_stay_in_the_cell():
    text = 'prompt,answer\n"line one\nline two","say ""hi"""\r\nnext,row\r\n'
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.rows == [
        {"prompt": "line one\nline two", "answer": 'say "hi"'},
        {"prompt": "next", "answer": "row"},
    ]
    # The record spanning two lines is still spreadsheet row 2.
    assert table.row_numbers == [2, 3]


def test_crlf_inside_a_quoted_cell_is_kept():
    text = 'a,b\r\n"x\r\ny",z\r\n'
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.rows == [{"a": "x\r\ny", "b": "z"}]


def test_utf8_bom_is_dropped():
    data = "\ufeffname,city\nZoë,Orléans\n".encode()
    table = parse_dataset(data, filename="data.csv")
    assert table.encoding == "utf-8-sig"
    assert table.columns == ["name", "city"]
    assert table.rows == [{"name": "Zoë", "city": "Orléans"}]


def test_cells_stay_strings_and_headers_are_trimmed():
    table = parse_dataset(b" id , score \n1,0.5\n2,\n", filename="data.csv")
    assert table.columns == ["id", "score"]
    assert table.rows == [{"id": "1", "score": "0.5"}, {"id": "2", "score": ""}]


def test_blank_records_are_skipped_but_counted():
    text = "a,b\n1,2\n\n,\n3,4\n,\n"
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.rows == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]
    assert table.row_numbers == [2, 5]
    assert table.file_row(1) == 5


def test_single_column_file():
    table = parse_dataset(b"question\nwhat?\nwhy?\n", filename="q.csv")
    assert table.columns == ["question"]
    assert [row["question"] for row in table.rows] == ["what?", "why?"]


def test_unknown_extension_sniffs_csv():
    table = parse_dataset(b"a;b\n1;2\n", filename="export.txt")
    assert table.format == "csv"
    assert table.rows == [{"a": "1", "b": "2"}]


def test_many_rows_parse():
    lines = ["id,text"] + [f"{i},row {i}" for i in range(10_000)]
    table = parse_dataset("\n".join(lines).encode(), filename="big.csv")
    assert len(table.rows) == 10_000
    assert table.rows[-1] == {"id": "9999", "text": "row 9999"}
