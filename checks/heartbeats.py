"""Heartbeats of the checks this worker process runs: one thread beats for all of them.

A running check's `heartbeat_at` is how everyone else tells a busy worker from a dead one
(maintenance.checks_reap_stale). The thread is started once per process, at its first check,
and writes one UPDATE every CHECK_HEARTBEAT_S for whatever checks are running then, so a
check costs no thread of its own. Every second in between it also looks whether the user
asked to stop one of them (Check.cancel_requested), and tells that check (its on_cancel).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.utils import timezone

from checks.models import Check

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_running: dict[int, Callable[[], None] | None] = {}
_thread: threading.Thread | None = None
CANCEL_POLL_S = 1.0


@contextlib.contextmanager
def beating(check_id: int, on_cancel: Callable[[], None] | None = None):
    """Keep the row of `check_id` marked alive while the block runs; call `on_cancel`
    (from the heartbeat thread) if the user asks to stop it meanwhile."""
    global _thread
    with _lock:
        _running[check_id] = on_cancel
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_beat_forever, name="heartbeats", daemon=True)
            _thread.start()
    try:
        yield
    finally:
        with _lock:
            _running.pop(check_id, None)


def beat_once() -> list[int]:
    """Mark every check running in this process alive now; the ids it beat for."""
    with _lock:
        ids = sorted(_running)
    if ids:
        Check.objects.filter(pk__in=ids, status=Check.Status.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    return ids


def cancels_once() -> list[int]:
    """Tell each check running here whose user asked to stop it; the ids told."""
    with _lock:
        ids = sorted(_running)
    if not ids:
        return []
    asked = list(
        Check.objects.filter(pk__in=ids, cancel_requested=True).values_list("pk", flat=True)
    )
    for check_id in asked:
        with _lock:
            on_cancel = _running.get(check_id)
        if on_cancel is not None:
            on_cancel()  # idempotent (contract.cancel.Cancel.set)
    return asked


def _beat_forever() -> None:
    wait = threading.Event().wait
    last_beat = time.monotonic()
    while True:
        wait(min(CANCEL_POLL_S, settings.CHECK_HEARTBEAT_S))
        try:
            cancels_once()
            if time.monotonic() - last_beat >= settings.CHECK_HEARTBEAT_S:
                last_beat = time.monotonic()
                beat_once()
        except Exception:  # a missed beat is survivable; a crashed check is not
            logger.exception("a heartbeat failed")
            connection.close()
