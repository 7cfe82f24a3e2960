"""A share of the web server's threads for the live panels' requests that wait.

A live panel (a check's, an evaluation's, a run's) asks for itself with `since=` and its
request holds a thread of the web server until the row changes or LONG_POLL_S pass.
Unbounded, one user's tabs, or a script sending the same request again and again, hold
every thread of a process and everyone's pages wait behind them. So a process lets at
most LONG_POLLS_PER_PROCESS requests wait at once (the rest of its threads are kept for
pages), one user at most LONG_POLLS_PER_USER of them.

A request over either share does not wait: it is answered at once with the row as it
is, and its panel asks again after ASK_AGAIN_MS rather than at once. A plain answer, not
a 429: the panel goes on updating, only less promptly, and nothing loops (a 429 would be
swapped in like any answer, `htmx-config` in base.html, and the panel in it would ask
again at once).

The counts are this process's own (gunicorn's threads share them; each of its worker
processes has its own), under a lock, and a turn is given back however its block ends.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

# How long a panel that was not let wait waits before it asks again.
ASK_AGAIN_MS = 2000

_lock = threading.Lock()
_waiting: Counter[int] = Counter()  # requests waiting now, by user id


@contextmanager
def turn(user_id: int) -> Iterator[bool]:
    """Whether this request may wait now (True) or must answer at once (False). A turn
    taken is held until the block ends, by a return or an exception alike."""
    with _lock:
        granted = (
            _waiting.total() < settings.LONG_POLLS_PER_PROCESS
            and _waiting[user_id] < settings.LONG_POLLS_PER_USER
        )
        if granted:
            _waiting[user_id] += 1
    try:
        yield granted
    finally:
        if granted:
            with _lock:
                _waiting[user_id] -= 1
                if not _waiting[user_id]:
                    del _waiting[user_id]


def waiting(user_id: int | None = None) -> int:
    """How many requests of this process wait now: all of them, or one user's."""
    with _lock:
        return _waiting.total() if user_id is None else _waiting[user_id]
