"""One sandboxed child process as the parent drives it: start, serve frames, end.

The parent owns the clock. It sends the job frame, then serves the child's frames while
draining stdout and stderr, all from one selector loop, so a flood of output can neither
block the child nor grow memory. Every child ends the same way, whatever happened:
contract.sandbox.kill() ends its whole sandbox (its cgroup, its pid namespace, its
session) and reaps it: no strays, no zombies.

What the frames mean is the caller's business (contract.runner): `serve()` hands each
frame to a handler and stops when the handler says the exchange is over, when the
deadline passes ("timeout"), or when the child closes its end without finishing
("crashed", with how it ended).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from contract import sandbox
from contract.capture import BoundedCapture
from contract.runtime_path import RUNTIME_DIR
from skynet import wire

CHILD_SCRIPT = "skynet_child.py"
# After the channel closes, how long to wait for the child's exit status.
EXIT_GRACE_S = 2.0
# After the sandbox is ended, how long to keep reading what is left in the pipes.
DRAIN_GRACE_S = 0.5
REAP_TIMEOUT_S = 10.0


def crash_params(
    reason: str, exit_code: int | None = None, signal_number: int | None = None
) -> dict:
    """params of a "crashed" problem; the same keys whatever the reason."""
    name = None
    if signal_number is not None:
        with contextlib.suppress(ValueError):
            name = signal.Signals(signal_number).name
    return {"reason": reason, "exit_code": exit_code, "signal": signal_number, "signal_name": name}


def _exit_status(pid: int, bwrap: bool) -> dict | None:
    """Exit code or signal of an exited child, without reaping it; None if running.

    bubblewrap reports a command killed by signal N as exit code 128 + N; in that mode
    such codes are read as signals (a metric calling os._exit(139) is then reported as
    SIGSEGV: an acceptable blur).
    """
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return None
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        code = info.si_status
        if not (bwrap and 128 < code < 128 + 65):
            return crash_params("exited", exit_code=code)
        number = code - 128
    else:
        number = info.si_status
    return crash_params("signal", signal_number=number)


@dataclass
class Ending:
    """How serve() stopped: "done" (the handler finished), "timeout" or "crashed"."""

    kind: str
    params: dict = field(default_factory=dict)


class ChildProcess:
    """A started child: its launch, its process, the parent's end of its socket."""

    def __init__(self, launch: sandbox.Launch, proc: subprocess.Popen, sock: socket.socket):
        self.launch = launch
        self.proc = proc
        self.sock = sock
        self.reader = wire.FrameReader()
        self.outbox = bytearray()
        self.channel_closed = False
        self.captures: dict[int, BoundedCapture] = {}
        self.sel = selectors.DefaultSelector()
        sock.setblocking(False)
        self.sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self.captures[stream.fileno()] = BoundedCapture()
            self.sel.register(stream.fileno(), selectors.EVENT_READ)
        self.stdout = self.stderr = ""
        self.stdout_truncated = self.stderr_truncated = 0

    @classmethod
    def start(
        cls,
        job: Callable[[dict], bytes],
        *,
        timeout_s: float,
        sandbox_config: sandbox.SandboxConfig | None,
    ) -> ChildProcess:
        """Start a child and queue its job frame (`job(limits)` builds it).

        Raises SandboxUnavailable when no sandbox can be had here, ValueError from `job`,
        OSError when no process can start.
        """
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            launch = sandbox.prepare(
                RUNTIME_DIR,
                CHILD_SCRIPT,
                [str(child_sock.fileno())],
                timeout_s=timeout_s,
                config=sandbox_config,
            )
            try:
                frame = job(launch.limits)
                proc = launch.popen(
                    pass_fds=(child_sock.fileno(),),
                    cwd="/",
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            except BaseException:
                launch.release()
                raise
        except BaseException:
            parent_sock.close()
            raise
        finally:
            child_sock.close()
        child = cls(launch, proc, parent_sock)
        child.outbox += frame
        return child

    @property
    def bwrap(self) -> bool:
        return self.launch.mode == "bwrap"

    def send(self, frame: dict) -> None:
        self.outbox += wire.encode(frame, limit=wire.MAX_JOB_FRAME)

    # -- the loop -------------------------------------------------------------------

    def serve(self, handle: Callable[[dict], bool], deadline: Callable[[], float]) -> Ending:
        """Hand frames to `handle` until it returns True, the deadline or the child's end.

        `deadline()` is read anew at every turn, so a handler may move it (a new window of
        the time limit). A malformed frame, or one the handler raises ProtocolError for,
        ends the child as crashed with reason "protocol". Never kills anything.
        """
        try:
            return self._serve(handle, deadline)
        except wire.ProtocolError:
            return Ending("crashed", crash_params("protocol"))

    def _serve(self, handle: Callable[[dict], bool], deadline: Callable[[], float]) -> Ending:
        while True:
            if self.channel_closed:
                return self._await_exit(deadline())
            remaining = deadline() - time.monotonic()
            if remaining <= 0:
                return Ending("timeout")
            for key, mask in self.sel.select(remaining):
                if key.fileobj is self.sock:
                    for frame in self._socket_event(mask):
                        if handle(frame):
                            return Ending("done")
                else:
                    self._pipe_event(key.fd)

    def _socket_event(self, mask: int):
        if mask & selectors.EVENT_WRITE and self.outbox:
            try:
                sent = self.sock.send(self.outbox)
                del self.outbox[:sent]
            except BlockingIOError:
                pass
            except OSError:  # the child went away; its EOF will follow
                self.outbox.clear()
        if mask & selectors.EVENT_READ:
            try:
                data = self.sock.recv(1 << 16)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                self.channel_closed = True
                self.sel.unregister(self.sock)
                return
            if data:
                yield from self.reader.feed(data)
        if not self.channel_closed:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.outbox else 0)
            self.sel.modify(self.sock, events)

    def _pipe_event(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self.captures[fd].feed(chunk)
        else:
            self.sel.unregister(fd)

    def _await_exit(self, deadline: float) -> Ending:
        """The channel closed without the exchange finishing: learn how the child ended."""
        if self.reader.pending:
            return Ending("crashed", crash_params("protocol"))
        limit = min(deadline, time.monotonic() + EXIT_GRACE_S)
        status = _exit_status(self.proc.pid, self.bwrap)
        while status is None and time.monotonic() < limit:
            self._drain(time.monotonic() + 0.01)
            status = _exit_status(self.proc.pid, self.bwrap)
        return Ending("crashed", status or crash_params("no_result"))

    def _drain(self, until: float) -> None:
        """Read the pipes until they close or `until`; the socket is dropped from the
        selector (a closed or writable socket would make select() return at once)."""
        for key in list(self.sel.get_map().values()):
            if key.fd not in self.captures:
                self.sel.unregister(key.fileobj)
        while True:
            pipes = [key for key in self.sel.get_map().values() if key.fd in self.captures]
            remaining = until - time.monotonic()
            if not pipes or remaining <= 0:
                return
            for key, _ in self.sel.select(remaining):
                if key.fd in self.captures:
                    self._pipe_event(key.fd)

    # -- the end --------------------------------------------------------------------

    def end(self) -> None:
        """Kill the sandbox and everything it started, reap it, keep what it printed."""
        try:
            sandbox.kill(self.proc, self.launch)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=REAP_TIMEOUT_S)
            try:
                self._drain(time.monotonic() + DRAIN_GRACE_S)
            finally:
                self.sel.close()
            out = self.captures.get(self.proc.stdout.fileno(), BoundedCapture())  # type: ignore[union-attr]
            err = self.captures.get(self.proc.stderr.fileno(), BoundedCapture())  # type: ignore[union-attr]
            self.stdout, self.stdout_truncated = out.text(), out.truncated
            self.stderr, self.stderr_truncated = err.text(), err.truncated
        finally:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()
            self.sock.close()
