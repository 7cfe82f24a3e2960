"""Heartbeats of the rows this worker process runs (checks, evaluations, runs): one thread
beats for all of them.

A running row's `heartbeat_at` is how everyone else tells a busy worker from a dead one
(the sweeps each app registers with jobs.sweeps). The thread is started once per process,
at its first job, and writes one UPDATE a model every CHECK_HEARTBEAT_S for whatever rows
are running then, so a job costs no thread of its own. Every second in between it also
looks whether the user asked to stop one of them (`cancel_requested`), and tells that job
(its on_cancel).
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

from jobs.models import WorkerRow

logger = logging.getLogger(__name__)

_lock = threading.Lock()
# (model, pk) of every row this process runs now: WorkerRows all, with the same status,
# heartbeat_at and cancel_requested fields.
_running: dict[tuple[type, int], Callable[[], None] | None] = {}
_thread: threading.Thread | None = None

CANCEL_POLL_S = 1.0


@contextlib.contextmanager
def beating(model: type[WorkerRow], pk: int, on_cancel: Callable[[], None] | None = None):
    """Keep the row `pk` of `model` (a check, an evaluation, a run) marked alive while the
    block runs; call `on_cancel` (from the heartbeat thread) if the user asks to stop it
    meanwhile."""
    global _thread
    key = (model, pk)
    with _lock:
        _running[key] = on_cancel
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_beat_forever, name="heartbeats", daemon=True)
            _thread.start()
    try:
        yield
    finally:
        with _lock:
            _running.pop(key, None)


def _by_model() -> dict[type, list[int]]:
    with _lock:
        keys = list(_running)
    found: dict[type, list[int]] = {}
    for model, pk in keys:
        found.setdefault(model, []).append(pk)
    return found


def beat_once() -> list[int]:
    """Mark every row running in this process alive now; the pks it beat for."""
    beat: list[int] = []
    for model, ids in _by_model().items():
        model.objects.filter(pk__in=ids, status="running").update(heartbeat_at=timezone.now())
        beat += ids
    return sorted(beat)


def cancels_once() -> list[int]:
    """Tell each row running here whose user asked to stop it; the pks told."""
    told: list[int] = []
    for model, ids in _by_model().items():
        asked = model.objects.filter(pk__in=ids, cancel_requested=True).values_list("pk", flat=True)
        for pk in asked:
            with _lock:
                on_cancel = _running.get((model, pk))
            if on_cancel is not None:
                on_cancel()  # idempotent (contract.cancel.Cancel.set)
            told.append(pk)
    return sorted(told)


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
