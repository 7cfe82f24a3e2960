"""Run metric.py on one case in a fresh, confined child process.

The parent owns the clock. It sends one job frame, then serves the child's
frames ("ready", "loaded", "llm" requests, "result") while draining stdout
and stderr, all from one selector loop so a flood of output can neither block
the child nor grow memory. Every child ends the same way, whatever happened:
contract.sandbox.kill() SIGKILLs its whole process group and everything the
sandbox knows it started, then reaps it: no strays, no zombies.

A child that exits, dies or stops talking without a result is "crashed",
never a pass; one that outlives its time is "timeout".
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from contract import frames, sandbox
from contract.capture import BoundedCapture
from contract.cases import Case
from contract.runtime_path import RUNTIME_DIR
from skynet import wire

CHILD_SCRIPT = "skynet_child.py"
# After the channel closes, how long to wait for the child's exit status.
EXIT_GRACE_S = 2.0
# After the group is killed, how long to keep reading what is left in the pipes.
DRAIN_GRACE_S = 0.5
REAP_TIMEOUT_S = 10.0

LlmHandler = Callable[[dict], dict]


def default_llm(request: dict) -> dict:
    """No metric model is configured yet: every request fails with a code."""
    return {"error": "no_metric_model", "message": ""}


@dataclass
class ChildOutcome:
    """What one child did. `phase` is where it was when it ended: "load" until
    the "loaded" frame arrived, "call" after it."""

    layers: list[str] = field(default_factory=list)
    loaded: dict | None = None
    result: dict | None = None
    failure: str | None = None  # None, "timeout" or "crashed"
    failure_params: dict = field(default_factory=dict)
    phase: str = "load"
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: int = 0
    stderr_truncated: int = 0
    parent_duration_ms: float | None = None
    observation: dict = field(default_factory=dict)


def loaded_is_final(loaded: dict) -> bool:
    """True when the child will not call score() after this "loaded" frame."""
    stages = loaded["stages"]
    return (
        loaded.get("call_args") not in (2, 3)
        or stages["load"]["status"] != "passed"
        or stages["signature"]["status"] != "passed"
        or stages["reward_spec"]["status"] == "failed"
    )


def _llm_reply(handler: LlmHandler, frame: dict) -> bytes:
    """Answer one skynet.llm() request with the handler's {"text"} or {"error", "message"}.

    The handler runs synchronously in the loop: its time counts against the
    call's limit, and the clock is checked again as soon as it returns.
    """
    request = {"instructions": frame.get("instructions"), "input": frame.get("input")}
    reply: dict = {"type": "llm_reply", "error": "handler_error", "message": ""}
    try:
        answer = handler(request)
    except Exception:  # the models layer failing is a model error for the metric, not ours
        answer = None
    if isinstance(answer, dict):
        if isinstance(answer.get("text"), str):
            reply = {"type": "llm_reply", "text": answer["text"]}
        elif isinstance(answer.get("error"), str):
            message = answer.get("message")
            reply = {
                "type": "llm_reply",
                "error": answer["error"],
                "message": message if isinstance(message, str) else "",
            }
    try:
        return wire.encode(reply)
    except (wire.ProtocolError, ValueError, TypeError):
        return wire.encode({"type": "llm_reply", "error": "reply_too_large", "message": ""})


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

    bubblewrap reports a command killed by signal N as exit code 128 + N; in that
    mode such codes are read as signals (a metric calling os._exit(139) is then
    reported as SIGSEGV: an acceptable blur).
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


class _Session:
    """The parent's side of one child: the frame protocol, the clock and the pipes."""

    def __init__(
        self,
        job: bytes,
        timeout_s: float,
        on_llm: LlmHandler,
        on_loaded: Callable[[dict], None] | None,
        bwrap: bool,
    ) -> None:
        self.timeout_s = timeout_s
        self.bwrap = bwrap
        self.on_llm = on_llm
        self.on_loaded = on_loaded
        self.outcome = ChildOutcome()
        self.reader = wire.FrameReader()
        self.outbox = bytearray(job)
        self.state = "start"  # start -> load ("ready" seen) -> call ("loaded" seen)
        self.finished = False  # a final frame arrived: nothing more is expected
        self.channel_closed = False
        self.captures: dict[int, BoundedCapture] = {}
        self.loaded_at = 0.0
        self.deadline = 0.0
        self.sel: selectors.BaseSelector = selectors.DefaultSelector()

    # -- frames ---------------------------------------------------------------

    def _fatal(self, frame: dict) -> None:
        reason = frame.get("reason")
        reason = reason if reason in ("confine_failed", "internal") else "internal"
        self._crash(crash_params(reason))

    def _crash(self, params: dict) -> None:
        self.outcome.failure, self.outcome.failure_params = "crashed", params
        self.finished = True

    def handle(self, frame: dict) -> None:
        kind = frame["type"]
        if kind == "fatal":
            self._fatal(frame)
        elif self.state == "start" and kind == "ready":
            self.outcome.layers = list(frames.check_ready(frame))
            self.state = "load"
        elif self.state in ("load", "call") and kind == "llm":
            self.outbox += _llm_reply(self.on_llm, frame)
        elif self.state == "load" and kind == "loaded":
            loaded = frames.check_loaded(frame)
            self.outcome.loaded = loaded
            self.outcome.phase = self.state = "call"
            self.loaded_at = time.monotonic()
            # Loading and calling each get the full time limit.
            self.deadline = self.loaded_at + self.timeout_s
            if self.on_loaded is not None:
                self.on_loaded(loaded)
            if loaded_is_final(loaded):
                self.finished = True
        elif self.state == "call" and kind == "result":
            self.outcome.result = frames.check_result(frame)
            self.outcome.parent_duration_ms = (time.monotonic() - self.loaded_at) * 1000
            self.finished = True
        else:
            raise wire.ProtocolError("unexpected_frame")

    # -- the loop -------------------------------------------------------------

    def start(self, proc: subprocess.Popen, sock: socket.socket) -> None:
        self.deadline = time.monotonic() + self.timeout_s
        self.sel = selectors.DefaultSelector()
        sock.setblocking(False)
        self.sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        for stream in (proc.stdout, proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self.captures[stream.fileno()] = BoundedCapture()
            self.sel.register(stream.fileno(), selectors.EVENT_READ)

    def serve(self, proc: subprocess.Popen, sock: socket.socket) -> None:
        """Run until a final frame, a crash or the deadline; never kills anything."""
        try:
            self._serve(proc, sock, self.sel)
        except wire.ProtocolError:
            self._crash(crash_params("protocol"))

    def finish(self, proc: subprocess.Popen) -> None:
        """After the sandbox was ended: read what is left in the pipes, then close."""
        try:
            self._drain(self.sel, time.monotonic() + DRAIN_GRACE_S)
        finally:
            self.sel.close()
        self._collect_output(proc)

    def _serve(
        self, proc: subprocess.Popen, sock: socket.socket, sel: selectors.BaseSelector
    ) -> None:
        while not self.finished:
            if self.channel_closed:
                self._await_exit(proc, sel)
                return
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.outcome.failure = "timeout"
                self.outcome.failure_params = {"seconds": self.timeout_s}
                return
            for key, mask in sel.select(remaining):
                if key.fileobj is sock:
                    self._socket_event(sock, sel, mask)
                else:
                    self._pipe_event(key.fd, sel)
                if self.finished:
                    return

    def _socket_event(self, sock: socket.socket, sel: selectors.BaseSelector, mask: int) -> None:
        if mask & selectors.EVENT_WRITE and self.outbox:
            try:
                sent = sock.send(self.outbox)
                del self.outbox[:sent]
            except BlockingIOError:
                pass
            except OSError:  # the child went away; its EOF will follow
                self.outbox.clear()
        if mask & selectors.EVENT_READ:
            try:
                data = sock.recv(1 << 16)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                self.channel_closed = True
                sel.unregister(sock)
                return
            if data:
                for frame in self.reader.feed(data):
                    self.handle(frame)
                    if self.finished:
                        return
        if not self.channel_closed:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.outbox else 0)
            sel.modify(sock, events)

    def _pipe_event(self, fd: int, sel: selectors.BaseSelector) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self.captures[fd].feed(chunk)
        else:
            sel.unregister(fd)

    def _await_exit(self, proc: subprocess.Popen, sel: selectors.BaseSelector) -> None:
        """The channel closed without a final frame: learn how the child ended."""
        if self.reader.pending:
            raise wire.ProtocolError("truncated_frame")
        limit = min(self.deadline, time.monotonic() + EXIT_GRACE_S)
        status = _exit_status(proc.pid, self.bwrap)
        while status is None and time.monotonic() < limit:
            self._drain(sel, time.monotonic() + 0.01)
            status = _exit_status(proc.pid, self.bwrap)
        self._crash(status or crash_params("no_result"))

    def _drain(self, sel: selectors.BaseSelector, until: float) -> None:
        """Read the pipes until they close or `until`; the socket is dropped from `sel`
        (a closed or writable socket would make select() return at once, forever)."""
        for key in list(sel.get_map().values()):
            if key.fd not in self.captures:
                sel.unregister(key.fileobj)
        while True:
            pipes = [key for key in sel.get_map().values() if key.fd in self.captures]
            remaining = until - time.monotonic()
            if not pipes or remaining <= 0:
                return
            for key, _ in sel.select(remaining):
                if key.fd in self.captures:
                    self._pipe_event(key.fd, sel)

    def _collect_output(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        out = self.captures.get(proc.stdout.fileno(), BoundedCapture())
        err = self.captures.get(proc.stderr.fileno(), BoundedCapture())
        self.outcome.stdout, self.outcome.stdout_truncated = out.text(), out.truncated
        self.outcome.stderr, self.outcome.stderr_truncated = err.text(), err.truncated


def _end(proc: subprocess.Popen, launch: sandbox.Launch) -> None:
    """Kill the child and everything it started, and reap it."""
    kill = getattr(sandbox, "kill", None)
    if kill is not None:
        # Knows the sandbox's layout (bwrap's pid namespace, setsid'd grandchildren).
        kill(proc, launch)
    else:
        # start_new_session made the child a group leader with pgid == pid; it is
        # not reaped yet, so this id still names its group and nothing else.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=REAP_TIMEOUT_S)


def child_limits(timeout_s: float, config: sandbox.SandboxConfig | None) -> dict:
    """job["limits"]: the sandbox's own, for a child that may load for timeout_s and
    then call score() for timeout_s (the CPU limit is only a backstop to our clock)."""
    limits_for = getattr(sandbox, "limits_for", None)
    if limits_for is not None:
        return limits_for(2 * timeout_s, config)
    return {"memory_mb": getattr(config or sandbox.SandboxConfig(), "memory_mb", 512)}


def build_job(source: str, case: Case, limits: dict) -> bytes:
    """The framed job; raises ValueError when the case is not JSON or too large."""
    job = {
        "type": "job",
        "source": source,
        "filename": "metric.py",
        "case": case.to_job(),
        "limits": limits,
        "observation": case.measured(),
    }
    try:
        return wire.encode(job, limit=wire.MAX_JOB_FRAME)
    except wire.ProtocolError:
        raise ValueError("job_too_large") from None
    except (TypeError, ValueError):
        raise ValueError("case_not_json") from None


def run_child(
    source: str,
    case: Case,
    *,
    timeout_s: float,
    on_llm: LlmHandler | None = None,
    on_loaded: Callable[[dict], None] | None = None,
    sandbox_config: sandbox.SandboxConfig | None = None,
) -> ChildOutcome:
    """Run score() of `source` on `case` in a new child; always returns, never leaves a process.

    on_llm answers the child's skynet.llm() requests (default: no_metric_model);
    on_loaded is called with the "loaded" frame as soon as it arrives. Raises
    ValueError for a case that cannot be sent, OSError when no child can start.
    """
    job = build_job(source, case, child_limits(timeout_s, sandbox_config))
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        launch = sandbox.prepare(
            RUNTIME_DIR,
            CHILD_SCRIPT,
            [str(child_sock.fileno())],
            timeout_s=2 * timeout_s,
            config=sandbox_config,
        )
        bwrap = getattr(launch, "mode", "") == "bwrap"
        session = _Session(job, timeout_s, on_llm or default_llm, on_loaded, bwrap)
        session.outcome.observation = case.measured()
        with tempfile.TemporaryDirectory(prefix="skynet-check-") as workdir:
            proc = subprocess.Popen(
                launch.argv,
                env=launch.env,
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(child_sock.fileno(),),
                start_new_session=True,
            )
            child_sock.close()
            try:
                session.start(proc, parent_sock)
                session.serve(proc, parent_sock)
            finally:
                _end(proc, launch)
                session.finish(proc)
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()
        session.outcome.layers = list(dict.fromkeys([*launch.layers, *session.outcome.layers]))
    finally:
        child_sock.close()
        parent_sock.close()
    return session.outcome
