"""Text every database stores as it is: what a metric's text becomes before it is written.

A metric's feedback, its score names, what it printed and the messages it raised reach
the worker as any Python string can be, and two kinds of character cannot be stored
everywhere: PostgreSQL refuses NUL in text and in jsonb (JSON's \\u0000 has no text to
become), and a lone surrogate (half of a UTF-16 pair, which a metric can send escaped)
has no UTF-8 form for a driver to send. SQLite takes both, so the same check that passes
there would end on PostgreSQL in a write that raises: a check "lost", an evaluation with
no cases kept.

Both become U+FFFD REPLACEMENT CHARACTER, Unicode's mark for a character that cannot be
represented (what a decoder puts where it cannot read, as a check's captured output
already shows): one character for one, so a length, a cap or a position measured before
stays true, and the reader still sees that something was there. A visible escape
("\\x00") would lengthen the text past caps already applied and read as the metric's
own words.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace
from typing import TypeVar

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ATOMS = frozenset({int, float, bool, type(None)})

T = TypeVar("T")


def storable_text(text: str) -> str:
    """`text` with each NUL and each lone surrogate replaced by U+FFFD."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def storable(value: T) -> T:
    """`value` with every string in it made storable (dictionary keys too), through
    dicts, lists, tuples and dataclass instances; anything else is kept as it is."""
    if type(value) in _ATOMS:
        return value
    if isinstance(value, str):
        return storable_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [storable(item) for item in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(storable(item) for item in value)  # type: ignore[return-value]
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: storable(getattr(value, f.name)) for f in fields(value) if f.init}
        return replace(value, **changes)
    return value
