"""Cells a spreadsheet would run as formulas (CSV injection, per OWASP)."""

from __future__ import annotations

import json
import re
import unicodedata

# OWASP's CSV injection guidance: a cell starting with one of these may be evaluated
# when the exported file is opened in a spreadsheet; tab, carriage return and line feed
# whatever follows them.
OPERATORS = ("=", "+", "-", "@")
CONTROLS = ("\t", "\r", "\n")
# Their full-width forms (U+FF1D, U+FF0B, U+FF0D, U+FF20). OWASP names the ASCII ones
# only; whether a spreadsheet takes these for operators depends on the application and
# its input settings, and a quote before a rare cell of text costs nothing, where a
# formula missed runs.
FULL_WIDTH = ("\uff1d", "\uff0b", "\uff0d", "\uff20")
# A plain number like "-5" or "+1.5e3" starts with + or - but a spreadsheet
# reads it as a number, not a formula; flagging every negative number would
# bury the real warnings, and quoting them would change the data on export.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# Characters a reader does not see before the "=": whitespace (a space, a newline, a
# no-break or ideographic space) and format characters (zero-width space U+200B, joiners,
# U+FEFF, direction marks), which a spreadsheet may drop before reading the rest.
_UNSEEN_CATEGORIES = ("Cc", "Cf")
# The first characters of most cells, none of which can start a formula-like one (the
# printable ASCII ones but the operators; "" is an empty cell's): the parsers test each
# cell's first against this set before anything costlier.
PLAIN_FIRST = frozenset(chr(code) for code in range(0x21, 0x7F)) - set(OPERATORS) | {""}
# How many cells the warning names; the count covers them all.
WARNING_CELLS = 5


def _seen(text: str) -> str:
    """`text` from its first character a reader sees."""
    at = 0
    while at < len(text) and (
        text[at].isspace() or unicodedata.category(text[at]) in _UNSEEN_CATEGORIES
    ):
        at += 1
    return text[at:]


def is_formula_like(text: str) -> bool:
    """Whether a spreadsheet could read `text` as a formula: it starts with a tab, a
    carriage return or a line feed, or with an operator once what a reader does not see
    is skipped (" =1+1", "\u200b=1+1"), and is not a plain number (" -5")."""
    if text.startswith(CONTROLS):
        return True
    seen = _seen(text)
    return seen.startswith(OPERATORS + FULL_WIDTH) and not _NUMBER.fullmatch(seen)


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
