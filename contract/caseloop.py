"""One loop that serves every case of a check at once, on the worker's clock.

Each case is a `Channel`: the worker's ends of one forked case process (contract.warm), a
protocol session (contract.protocol) and the case's deadline. The loop selects over all
channels' sockets and pipes and over their sandboxes' control sockets, hands frames to the
sessions, flushes what they send, and ends a case that passes its deadline ("timeout",
and the sandbox kills that process) or whose process ends before finishing ("crashed",
with the exit status its sandbox reports). Model calls run in a small thread pool so a
slow provider never holds up another case, while that case's own clock keeps running.

A flood of output can neither block a child nor grow memory: stdout and stderr are read
as they come into bounded captures.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from contract.cancel import Cancel
from contract.capture import BoundedCapture
from contract.protocol import ModelHandler, crash_params, llm_reply
from contract.warm import CaseEnds, WarmSandbox
from skynet import wire

# After a case's socket closes, how long to wait for its exit status.
EXIT_GRACE_S = 2.0
# After a case finished, how long its output pipes may still be read.
DRAIN_GRACE_S = 0.05


def _status_params(report: dict | None) -> dict:
    if report is None:
        return crash_params("no_result")
    if report.get("signal") is not None:
        return crash_params("signal", signal_number=report["signal"])
    code = report.get("code")
    return crash_params("exited", exit_code=code if isinstance(code, int) else None)


class Channel:
    """One case being served: its ends, its session, and what it printed."""

    def __init__(
        self,
        sandbox: WarmSandbox,
        index: int,
        ends: CaseEnds,
        session,
        on_done: Callable[[Channel], None],
    ) -> None:
        self.sandbox = sandbox
        self.index = index
        self.ends = ends
        self.session = session
        self.on_done = on_done
        self.reader = wire.FrameReader()
        self.outbox = bytearray()
        self.stdout = BoundedCapture()
        self.stderr = BoundedCapture()
        self.socket_closed = False
        self.closed_at: float | None = None
        self.exit_report: dict | None = None
        self.done = False
        # The events its socket is registered for, so a turn changes them only when needed.
        self.events = selectors.EVENT_READ

    def send(self, frame: dict) -> None:
        self.outbox += wire.encode(frame, limit=wire.MAX_JOB_FRAME)


class CaseLoop:
    def __init__(self, max_model_calls: int = 8, cancel: Cancel | None = None) -> None:
        self.sel = selectors.DefaultSelector()
        self.channels: list[Channel] = []
        self.sandboxes: dict[int, WarmSandbox] = {}
        self.readers: dict[int, wire.FrameReader] = {}
        self._executor = ThreadPoolExecutor(max_workers=max_model_calls, thread_name_prefix="llm")
        self._replies: list[tuple[Channel, dict]] = []
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.sel.register(self._wake_read, selectors.EVENT_READ, ("wake", None))
        self.cancel = cancel
        if cancel is not None:
            cancel.on_set(self._wake)

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_write, b"x")

    # -- building ---------------------------------------------------------------------

    def watch(self, warm: WarmSandbox) -> None:
        if warm.control.fileno() not in self.sandboxes:
            warm.control.setblocking(False)
            self.sandboxes[warm.control.fileno()] = warm
            self.readers[warm.control.fileno()] = wire.FrameReader()
            self.sel.register(warm.control, selectors.EVENT_READ, ("control", warm))

    def open(
        self,
        warm: WarmSandbox,
        index: int,
        job: dict,
        cpu_seconds: int,
        make_session: Callable[[Channel], object],
        on_done: Callable[[Channel], None],
    ) -> Channel:
        """Start a case on `warm` and serve it; make_session(channel) builds its session."""
        self.watch(warm)
        warm.control.setblocking(True)
        try:
            ends = warm.open_case(job, cpu_seconds)
        finally:
            warm.control.setblocking(False)
        channel = Channel(warm, index, ends, None, on_done)
        channel.session = make_session(channel)
        ends.sock.setblocking(False)
        for fd in (ends.stdout, ends.stderr):
            os.set_blocking(fd, False)
        self.sel.register(ends.sock, selectors.EVENT_READ, ("case", channel))
        self.sel.register(ends.stdout, selectors.EVENT_READ, ("out", channel))
        self.sel.register(ends.stderr, selectors.EVENT_READ, ("err", channel))
        self.channels.append(channel)
        return channel

    def asker(self, channel: Channel, handler: ModelHandler) -> Callable[[dict], None]:
        """The session's `ask`: answer an llm request in the pool, reply through the loop."""

        def ask(frame: dict) -> None:
            def call() -> None:
                reply = llm_reply(handler, frame)
                with self._lock:
                    self._replies.append((channel, reply))
                with contextlib.suppress(BlockingIOError):
                    os.write(self._wake_write, b"x")

            self._executor.submit(call)

        return ask

    # -- running ----------------------------------------------------------------------

    def run(self) -> None:
        """Serve until every channel is done (on_done callbacks may open more)."""
        try:
            while self.channels:
                self._turn()
        finally:
            self._executor.shutdown(wait=True, cancel_futures=True)

    def _turn(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            self._cancel_all()
            return
        now = time.monotonic()
        timeout = None
        for channel in list(self.channels):
            if channel.done:
                continue
            deadline = channel.session.deadline
            if channel.socket_closed:
                deadline = min(deadline, (channel.closed_at or now) + EXIT_GRACE_S)
            if deadline <= now:
                self._expire(channel, now)
                continue
            timeout = deadline - now if timeout is None else min(timeout, deadline - now)
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if channel.outbox else 0)
            if not channel.socket_closed and events != channel.events:
                self.sel.modify(channel.ends.sock, events, ("case", channel))
                channel.events = events
        if not self.channels:
            return
        for key, mask in self.sel.select(timeout):
            kind, owner = key.data
            if kind == "wake":
                self._replies_in()
            elif kind == "control":
                self._control(owner)
            elif owner.done:
                # Finished earlier in this same batch: its descriptors are closed (and their
                # numbers may already belong to a case opened since).
                continue
            elif kind == "case":
                self._case_event(owner, mask)
            else:
                self._pipe(owner, key.fd, owner.stdout if kind == "out" else owner.stderr)

    def _cancel_all(self) -> None:
        """The user stopped the check: every case still running ends, its process killed
        (one a case's on_done opens after this is ended on the next turn)."""
        with contextlib.suppress(BlockingIOError, OSError):
            os.read(self._wake_read, 4096)
        for channel in list(self.channels):
            if channel.done:
                continue
            channel.session.ended("cancelled")
            if not channel.socket_closed:
                channel.sandbox.kill_case(channel.ends.slot)
            self._finish(channel)

    def _expire(self, channel: Channel, now: float) -> None:
        if channel.socket_closed:
            channel.session.ended("crashed", _status_params(channel.exit_report))
        else:
            channel.session.ended("timeout")
            channel.sandbox.kill_case(channel.ends.slot)
        self._finish(channel)

    def _replies_in(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_read, 4096)
        with self._lock:
            replies, self._replies = self._replies, []
        for channel, reply in replies:
            if not channel.done and not channel.socket_closed:
                channel.send(reply)

    def _control(self, warm: WarmSandbox) -> None:
        reader = self.readers[warm.control.fileno()]
        try:
            data = warm.control.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            # The sandbox itself is gone: its cases cannot report an exit any more.
            self.sel.unregister(warm.control)
            for channel in self.channels:
                if channel.sandbox is warm and channel.exit_report is None:
                    channel.exit_report = {"code": None, "signal": None, "gone": True}
            return
        try:
            for frame in reader.feed(data):
                if frame.get("type") != "exited":
                    continue
                for channel in list(self.channels):
                    if channel.sandbox is warm and channel.ends.slot == frame.get("index"):
                        channel.exit_report = frame
                        if channel.socket_closed and not channel.done:
                            channel.session.ended("crashed", _status_params(frame))
                            self._finish(channel)
        except wire.ProtocolError:
            self.sel.unregister(warm.control)

    def _case_event(self, channel: Channel, mask: int) -> None:
        if channel.done:
            return
        sock = channel.ends.sock
        if mask & selectors.EVENT_WRITE and channel.outbox:
            try:
                sent = sock.send(channel.outbox)
                del channel.outbox[:sent]
            except BlockingIOError:
                pass
            except OSError:
                channel.outbox.clear()
        if not mask & selectors.EVENT_READ:
            return
        try:
            data = sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        now = time.monotonic()
        if not data:
            self._socket_closed(channel, now)
            return
        try:
            for frame in channel.reader.feed(data):
                if channel.session.handle(frame, now):
                    self._finish(channel)
                    return
        except wire.ProtocolError:
            channel.session.ended("crashed", crash_params("protocol"))
            self._finish(channel)

    def _socket_closed(self, channel: Channel, now: float) -> None:
        channel.socket_closed = True
        channel.closed_at = now
        self.sel.unregister(channel.ends.sock)
        if channel.reader.pending:
            channel.session.ended("crashed", crash_params("protocol"))
            self._finish(channel)
        elif channel.exit_report is not None:
            channel.session.ended("crashed", _status_params(channel.exit_report))
            self._finish(channel)

    def _pipe(self, channel: Channel, fd: int, capture: BoundedCapture) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            capture.feed(chunk)
        else:
            with contextlib.suppress(KeyError):
                self.sel.unregister(fd)

    def _finish(self, channel: Channel) -> None:
        if channel.done:
            return
        channel.done = True
        # Only the channels still being served are kept: an evaluation opens thousands.
        self.channels.remove(channel)
        if not channel.socket_closed:
            self.sel.unregister(channel.ends.sock)
        channel.ends.sock.close()
        # What the case printed is in its pipes by now (it flushes before reporting).
        deadline = time.monotonic() + DRAIN_GRACE_S
        for fd, capture in (
            (channel.ends.stdout, channel.stdout),
            (channel.ends.stderr, channel.stderr),
        ):
            with contextlib.suppress(KeyError):
                self.sel.unregister(fd)
            while time.monotonic() < deadline:
                try:
                    chunk = os.read(fd, 1 << 16)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                capture.feed(chunk)
            os.close(fd)
        channel.on_done(channel)

    def close(self) -> None:
        for channel in self.channels:
            if not channel.done:
                channel.done = True
                with contextlib.suppress(Exception):
                    self.sel.unregister(channel.ends.sock)
                channel.ends.sock.close()
                for fd in (channel.ends.stdout, channel.ends.stderr):
                    with contextlib.suppress(Exception):
                        self.sel.unregister(fd)
                    with contextlib.suppress(OSError):
                        os.close(fd)
        with contextlib.suppress(Exception):
            self.sel.close()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._executor.shutdown(wait=False, cancel_futures=True)
