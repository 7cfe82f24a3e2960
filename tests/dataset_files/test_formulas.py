"""Formula-like cells: kept as text, warned about, neutralised for export."""

from __future__ import annotations

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
