"""The loop a warm sandbox (skynet_warm) and the zygote (skynet_zygote) share: serve the
worker's frames on the control socket, fork a child for each, and reap the children as
they exit, with no thread and no busy wait.

SIGCHLD writes to a wake-up pipe (signal.set_wakeup_fd), so one select() waits for a
frame and for an exit alike; every pass reaps whatever has exited (WNOHANG), so no child
is left a zombie however its exit and a frame interleave. Stdlib only.
"""

from __future__ import annotations

import os
import select
import signal
import socket
from collections.abc import Callable

# A frame and the descriptors that came with it; (None, []) once the worker closed its end.
Received = tuple[dict | None, list[int]]


def exit_report(status: int) -> dict:
    """How a child ended, as the worker reads it: its exit code, or the signal that
    killed it."""
    if os.WIFSIGNALED(status):
        return {"code": None, "signal": os.WTERMSIG(status)}
    return {"code": os.waitstatus_to_exitcode(status), "signal": None}


def serve(
    control: socket.socket,
    receive: Callable[[socket.socket], Received],
    handle: Callable[[dict, list[int], tuple[int, int]], None],
    exited: Callable[[int, int], None] = lambda pid, status: None,
) -> None:
    """Until the worker closes `control`: each frame `receive` reads goes to `handle`
    (with its descriptors, closed here after it, and the wake-up pipe, which a forked
    child must close); each child reaped goes to `exited` (its pid and wait status)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    wake = (wake_read, wake_write)
    while True:
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 512)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break  # no child at all
            if pid == 0:
                break  # children, none of them ended
            exited(pid, status)
        if control not in readable:
            continue
        frame, fds = receive(control)
        if frame is None:
            return  # the worker is done with this process
        try:
            handle(frame, fds, wake)
        finally:
            for fd in fds:
                os.close(fd)
