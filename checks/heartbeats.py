"""Heartbeats of the checks this worker process runs: one thread beats for all of them.

A running check's `heartbeat_at` is how everyone else tells a busy worker from a dead one
(maintenance.checks_reap_stale). The thread is started once per process, at its first check,
and writes one UPDATE every CHECK_HEARTBEAT_S for whatever checks are running then, so a
check costs no thread of its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from checks.models import Check

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_running: set[int] = set()
_thread: threading.Thread | None = None


@contextlib.contextmanager
def beating(check_id: int):
    """Keep the row of `check_id` marked alive while the block runs."""
    global _thread
    with _lock:
        _running.add(check_id)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_beat_forever, name="heartbeats", daemon=True)
            _thread.start()
    try:
        yield
    finally:
        with _lock:
            _running.discard(check_id)


def beat_once() -> list[int]:
    """Mark every check running in this process alive now; the ids it beat for."""
    with _lock:
        ids = sorted(_running)
    if ids:
        Check.objects.filter(pk__in=ids, status=Check.Status.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    return ids


def _beat_forever() -> None:
    wait = threading.Event().wait
    while True:
        wait(settings.CHECK_HEARTBEAT_S)
        try:
            beat_once()
        except Exception:  # a missed beat is survivable; a crashed check is not
            logger.exception("a heartbeat failed")
            connection.close()
