"""Cells a spreadsheet would run as formulas (CSV injection, per OWASP)."""

from __future__ import annotations

import json
import re

# OWASP's CSV injection guidance: a cell starting with one of these may be
# evaluated when the exported file is opened in a spreadsheet.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain number like "-5" or "+1.5e3" starts with + or - but a spreadsheet
# reads it as a number, not a formula; flagging every negative number would
# bury the real warnings, and quoting them would change the data on export.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# How many cells the warning names; the count covers them all.
WARNING_CELLS = 5


def is_formula_like(text: str) -> bool:
    return text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text)


def safe_cell(value: object) -> str:
    """The cell's text for a CSV download, a formula-like one prefixed by a quote.

    The leading single quote makes a spreadsheet show the text instead of
    evaluating it. JSON values other than strings are written as JSON.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "'" + text if is_formula_like(text) else text


class FormulaScan:
    """Counts formula-like cells while a parser walks them; keeps the first few."""

    def __init__(self) -> None:
        self.count = 0
        self.cells: list[dict] = []

    def check(self, value: object, row: int, column: str) -> None:
        if isinstance(value, str) and is_formula_like(value):
            self.count += 1
            if len(self.cells) < WARNING_CELLS:
                self.cells.append({"row": row, "column": column})

    def warnings(self) -> list[dict]:
        if not self.count:
            return []
        return [
            {"code": "formula_like_cells", "params": {"count": self.count, "cells": self.cells}}
        ]
