"""ast.parse of a metric's text that any number of threads can call at once, unlocked.

Two things a parse touches are shared by every thread of a process. A process-wide lock
around each parse would keep them safe, and let one user's 256 KB source hold every
other user's editor diagnostics for as long as its parse takes (about a second). Each is
kept safe without one:

- CPython 3.11.0 to 3.11.7 and 3.12.0 to 3.12.1 count the AST constructor's recursion
  in the interpreter, not in the call (gh-106905). When a garbage collection during one
  parse's conversion runs a finaliser, the finaliser's Python code can hand the GIL to
  another thread's parse, and both end in "SystemError: AST constructor recursion depth
  mismatch", or in a RecursionError their source did not earn. A conversion that cannot
  collect runs no Python code and so keeps the GIL to its end: on those Pythons,
  automatic collection pauses while any parse is in flight and resumes when the last
  one ends. Reference counting frees what it always does meanwhile; cycles wait, and
  parses that overlap without a break collect them every ENDS_PER_COLLECTION ends.
- warnings.catch_warnings swaps the process's filters, so two threads using it can each
  restore the other's for good. What the parser warns of in the metric's own text
  (invalid escape sequences, "0in x") is instead ignored by one filter set at import, on
  warnings from FILENAME alone.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

# The name every parse gives the text: the parser's warnings come "from" it.
FILENAME = "metric.py"
warnings.filterwarnings("ignore", module=re.escape(FILENAME.removesuffix(".py")) + r"\Z")

# The Pythons whose AST constructor counts its recursion for every thread (above).
_SHARED_COUNTER = (3, 11) <= sys.version_info[:3] < (3, 11, 8) or (
    (3, 12) <= sys.version_info[:3] < (3, 12, 2)
)
# Parses that may end within one pause before the next to end collects anyway: parses
# that overlap without a break would otherwise keep every cycle the process makes (a
# request's, with its posted source) for as long as they go on.
ENDS_PER_COLLECTION = 16
# Held only to count parses in flight, never across one.
_count_lock = threading.Lock()
_in_flight = 0
_ended = 0  # parses ended since the pause began, or since it last collected
_collecting = False  # whether collection was on when the pause began


@contextmanager
def _no_collection() -> Iterator[None]:
    global _in_flight, _ended, _collecting
    with _count_lock:
        if _in_flight == 0:
            _collecting, _ended = gc.isenabled(), 0
            gc.disable()
        _in_flight += 1
    try:
        yield
    finally:
        with _count_lock:
            _in_flight -= 1
            _ended += 1
            collect = _collecting and _in_flight > 0 and _ended >= ENDS_PER_COLLECTION
            if collect:
                _ended = 0
            if _in_flight == 0 and _collecting:
                gc.enable()
        if collect:
            # Safe beside the parses still in flight: a conversion that cannot collect
            # never gives up the GIL, so none is in the middle of one while this runs.
            gc.collect()


def parse(text: str) -> ast.Module:
    """ast.parse(text), raising what it raises, safe beside any other parse here."""
    if not _SHARED_COUNTER:
        return ast.parse(text, filename=FILENAME)
    with _no_collection():
        return ast.parse(text, filename=FILENAME)
