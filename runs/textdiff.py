"""Two candidate texts compared word by word, for the run page: the seed's words the best
candidate dropped in <del>, the ones it wrote in <ins>, each also said in words for a
screen reader and struck through or underlined by the stylesheet, so the change reads
without its colours."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

# Words and the spaces between them, each a token, so a change keeps the text's own
# spaces and line breaks and a word that gained a line after it is still the same word.
_TOKENS = re.compile(r"\S+|\s+")
# Past this many words on either side, the texts are compared line by line instead
# (difflib's matcher is quadratic in the worst case).
MAX_WORDS = 6000


@dataclass(frozen=True)
class TextDiff:
    html: SafeString
    removed: int  # words of the seed the best candidate no longer has
    added: int  # words it has that the seed did not
    same: bool


def _tokens(text: str) -> list[str]:
    tokens = _TOKENS.findall(text)
    if len(tokens) > 2 * MAX_WORDS:
        return text.splitlines(keepends=True)
    return tokens


def _words(tokens: list[str]) -> int:
    return sum(len(token.split()) for token in tokens)


def inline_diff(old: str, new: str) -> TextDiff:
    """`new` against `old` as one text with its removals and insertions marked."""
    a, b = _tokens(old), _tokens(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    parts: list[SafeString] = []
    removed = added = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(format_html("{}", "".join(b[j1:j2])))
            continue
        if tag in ("delete", "replace"):
            removed += _words(a[i1:i2])
            parts.append(
                format_html(
                    '<del><span class="visually-hidden">{} </span>{}</del>',
                    _("removed:"),
                    "".join(a[i1:i2]),
                )
            )
        if tag in ("insert", "replace"):
            added += _words(b[j1:j2])
            parts.append(
                format_html(
                    '<ins><span class="visually-hidden">{} </span>{}</ins>',
                    _("added:"),
                    "".join(b[j1:j2]),
                )
            )
    html = format_html_join("", "{}", ((part,) for part in parts))
    return TextDiff(html=html, removed=removed, added=added, same=old == new)
