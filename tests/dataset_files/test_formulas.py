"""Formula-like cells: kept as text, warned about, neutralised for export."""

from __future__ import annotations

import json

import pytest

from dataset_files import is_formula_like, parse_dataset, safe_cell


def test_formula_cells_are_kept_and_warned():
    text = "q,a\n=1+1,ok\n+cmd,@SUM(A1)\n-2+3,fine\n-5,+1.5\n"
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.rows[0] == {"q": "=1+1", "a": "ok"}
    (warning,) = table.warnings
    assert warning["code"] == "formula_like_cells"
    assert warning["params"]["count"] == 4
    assert warning["params"]["cells"] == [
        {"row": 2, "column": "q"},
        {"row": 3, "column": "q"},
        {"row": 3, "column": "a"},
        {"row": 4, "column": "q"},
    ]


def test_tab_and_carriage_return_starts():
    text = 'q,a\n"\tx","\ry"\n'
    table = parse_dataset(text.encode(), filename="data.csv")
    assert table.warnings[0]["params"]["count"] == 2


def test_the_warning_names_only_the_first_few_cells():
    text = "q\n" + "=A1\n" * 50
    (warning,) = parse_dataset(text.encode(), filename="data.csv").warnings
    assert warning["params"]["count"] == 50
    assert len(warning["params"]["cells"]) == 5


def test_jsonl_strings_are_checked_other_values_not():
    data = b'{"q": "=HYPERLINK(\\"x\\")", "n": -3, "l": ["=x"]}\n{"q": "-", "n": 1}\n'
    table = parse_dataset(data, filename="data.jsonl")
    (warning,) = table.warnings
    assert warning["params"] == {
        "count": 2,
        "cells": [{"row": 1, "column": "q"}, {"row": 2, "column": "q"}],
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-5", "-5"),
        ("+1.5e3", "+1.5e3"),
        ("plain", "plain"),
        ("", ""),
        (None, ""),
        (3, "3"),
        (-3, "-3"),
        (True, "true"),
        ({"k": "é"}, '{"k": "é"}'),
        (["=x"], '["=x"]'),
    ],
)
def test_safe_cell(value, expected):
    assert safe_cell(value) == expected


def test_safe_cells_are_not_formula_like():
    for value in ("=1", "+x", "-x", "@x", "\tx", "\rx"):
        assert is_formula_like(value)
        assert not is_formula_like(safe_cell(value))


# What a reader does not see before the operator, and the operators' full-width forms.
HIDDEN_STARTS = [
    " =1+1",
    "  @SUM(A1)",
    "\n=1+1",
    "\u00a0=1+1",  # no-break space
    "\u3000=1+1",  # ideographic space
    "\u200b=HYPERLINK(0)",  # zero-width space
    "\ufeff+cmd",  # zero-width no-break space (a BOM)
    "\u2060\u200d-2+3",  # word joiner, zero-width joiner
    "\u202e=1",  # right-to-left override
    "\uff1d1+1",  # ＝
    "\uff0bcmd",  # ＋
    "\uff0d2+3",  # －
    "\uff20SUM(A1)",  # ＠
    " \uff1d1",
]


@pytest.mark.parametrize("value", HIDDEN_STARTS)
def test_an_operator_behind_unseen_characters_or_full_width_is_neutralised(value):
    assert is_formula_like(value)
    assert safe_cell(value) == "'" + value
    assert not is_formula_like(safe_cell(value))


def test_the_parsers_warn_of_hidden_and_full_width_starts():
    # A number behind a space is still a number, and plain text behind one plain text.
    cells = [" =1+1", " -5", "\u200b=1+1", "\u200b+1.5", "\uff1d1+1", " plain", "\u3000@x"]
    csv_text = "q\n" + "".join(f'"{cell}"\n' for cell in cells)
    (warning,) = parse_dataset(csv_text.encode(), filename="data.csv").warnings
    assert warning["params"]["count"] == 4
    assert [cell["row"] for cell in warning["params"]["cells"]] == [2, 4, 6, 8]
    jsonl = "".join(json.dumps({"q": cell}) + "\n" for cell in cells)
    (warning,) = parse_dataset(jsonl.encode(), filename="data.jsonl").warnings
    assert [cell["row"] for cell in warning["params"]["cells"]] == [1, 3, 5, 7]
