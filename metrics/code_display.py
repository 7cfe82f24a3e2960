"""metric.py as the version pages show it: highlighted, one numbered row per line, and two
versions side by side with what changed marked."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES

# Unchanged lines shown around each change; longer unchanged runs fold into a gap row.
CONTEXT_LINES = 3


def _css_class(token_type) -> str:
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


def highlighted_lines(source: str) -> list[SafeString]:
    """Each line of `source` as highlighted HTML, with the classes of the site's
    pygments.css. A token over several lines (a docstring) is cut at each line break, so
    every line stands alone."""
    lines: list[list[str]] = [[]]
    lexer = PythonLexer(stripnl=False, ensurenl=False, tabsize=0)
    for token_type, value in lexer.get_tokens(source):
        css = _css_class(token_type)
        for k, piece in enumerate(value.split("\n")):
            if k:
                lines.append([])
            if piece:
                text = escape(piece)
                lines[-1].append(f'<span class="{css}">{text}</span>' if css else text)
    count = len(source.split("\n"))
    # Built only from escaped text and fixed class names.
    return [mark_safe("".join(parts)) for parts in lines[:count]]


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side diff: a line of each version (either may be absent),
    or a gap standing for `skipped` unchanged lines."""

    kind: str  # "same", "change", "del", "add" or "gap"
    old_number: int | None = None
    old_html: SafeString | str = ""
    new_number: int | None = None
    new_html: SafeString | str = ""
    skipped: int = 0


def side_by_side(old: str, new: str, context: int = CONTEXT_LINES) -> list[DiffRow]:
    """The rows comparing `old` with `new`; [] when they are the same."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    old_html, new_html = highlighted_lines(old), highlighted_lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    groups = matcher.get_grouped_opcodes(context)
    rows: list[DiffRow] = []
    shown_to = 0  # old lines up to here are shown or folded already
    for group in groups:
        first_old = group[0][1]
        if first_old > shown_to:
            rows.append(DiffRow("gap", skipped=first_old - shown_to))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    rows.append(DiffRow("same", i + 1, old_html[i], j + 1, new_html[j]))
                continue
            olds, news = list(range(i1, i2)), list(range(j1, j2))
            for k in range(max(len(olds), len(news))):
                i = olds[k] if k < len(olds) else None
                j = news[k] if k < len(news) else None
                kind = (
                    "change" if i is not None and j is not None else ("del" if j is None else "add")
                )
                rows.append(
                    DiffRow(
                        kind,
                        i + 1 if i is not None else None,
                        old_html[i] if i is not None else "",
                        j + 1 if j is not None else None,
                        new_html[j] if j is not None else "",
                    )
                )
        shown_to = group[-1][2]
    if rows and shown_to < len(old_lines):
        rows.append(DiffRow("gap", skipped=len(old_lines) - shown_to))
    return rows


@dataclass(frozen=True)
class UnifiedRow:
    """One row of a one-column diff: a line removed ("del"), added ("add") or kept
    ("same"), with its number in the old and the new text, or a gap of `skipped` kept
    lines. One column reads on a phone, where two side by side would not fit."""

    kind: str
    old_number: int | None = None
    new_number: int | None = None
    html: SafeString | str = ""
    skipped: int = 0


def unified(old: str, new: str, context: int = CONTEXT_LINES) -> list[UnifiedRow]:
    """The rows turning `old` into `new`, each changed run's removed lines before its
    added ones; [] when they are the same."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    old_html, new_html = highlighted_lines(old), highlighted_lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    rows: list[UnifiedRow] = []
    shown_to = 0
    for group in matcher.get_grouped_opcodes(context):
        first_old = group[0][1]
        if first_old > shown_to:
            rows.append(UnifiedRow("gap", skipped=first_old - shown_to))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [
                    UnifiedRow("same", i + 1, j + 1, new_html[j])
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                ]
                continue
            rows += [UnifiedRow("del", i + 1, None, old_html[i]) for i in range(i1, i2)]
            rows += [UnifiedRow("add", None, j + 1, new_html[j]) for j in range(j1, j2)]
        shown_to = group[-1][2]
    if rows and shown_to < len(old_lines):
        rows.append(UnifiedRow("gap", skipped=len(old_lines) - shown_to))
    return rows
