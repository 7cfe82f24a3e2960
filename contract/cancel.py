"""Stopping a check while it runs, from another thread.

The worker makes a Cancel per check and sets it when the user asks to stop; the case loop
that serves the check wakes at once, ends every case still running as "cancelled" and
kills its process. Setting it twice, or after the check ended, does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Cancel:
    def __init__(self) -> None:
        self._set = threading.Event()
        self._lock = threading.Lock()
        self._wakers: list[Callable[[], None]] = []

    def set(self) -> None:
        with self._lock:
            if self._set.is_set():
                return
            self._set.set()
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def is_set(self) -> bool:
        return self._set.is_set()

    def on_set(self, wake: Callable[[], None]) -> None:
        """Call `wake` when set (at once, if it is set already)."""
        with self._lock:
            if not self._set.is_set():
                self._wakers.append(wake)
                return
        wake()
