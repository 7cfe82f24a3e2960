"""Run metric.py on one case in a fresh, confined child process.

The parent owns the clock. It sends one job frame, then serves the child's
frames ("ready", "loaded", "llm" requests, "result") while draining stdout
and stderr, all from one selector loop so a flood of output can neither block
the child nor grow memory. Every child ends the same way, whatever happened:
contract.sandbox.kill() SIGKILLs its whole process group and everything the
sandbox knows it started, then reaps it: no strays, no zombies.

A child that exits, dies or stops talking without a result is "crashed",
never a pass; one that outlives its time is "timeout".

With an artifact (contract.artifacts) the child first runs it on the case's
input: "ready" -> program loading -> "run_started" -> "run_finished", then the
usual "loaded" and "result". The parent tracks the phase: llm() requests
before "run_finished" go to the task model's handler, later ones to the
metric's. It times the run on its own clock between "run_started" and
"run_finished", takes cost and tokens from the task handler's usage(), and
answers "run_finished" with a "measured" frame, which is what
skynet.observation() shows to score(). Each window (start and program load,
the run, loading metric.py, score()) gets the full time limit.
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
from contract.artifacts import (
    OUTPUT_REPR_LIMIT,
    check_run_finished,
    usage_delta,
    usage_now,
)
from contract.capture import BoundedCapture
from contract.cases import Case
from contract.runtime_path import RUNTIME_DIR
from skynet import OBSERVATION_KEYS, wire

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


def default_task_llm(request: dict) -> dict:
    """No task model is configured: every request of the artifact's run fails with a code."""
    return {"error": "no_task_model", "message": ""}


@dataclass
class ChildOutcome:
    """What one child did. `phase` is where it was when it ended: "run" until the
    "run_finished" frame arrived (only with an artifact), "load" until the
    "loaded" frame arrived, "call" after it.

    With an artifact, `run` is the run's report ({status, duration_ms, usage,
    output_repr, problem, params, exception, traceback}), `observation` the
    parent's measurements sent to the child (all None until the run finished)
    and `metric_usage` what the metric handler used after the run."""

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
    run: dict | None = None
    metric_usage: dict | None = None


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
        on_task_llm: LlmHandler | None = None,
        artifact: bool = False,
    ) -> None:
        self.timeout_s = timeout_s
        self.bwrap = bwrap
        self.on_llm = on_llm
        self.on_loaded = on_loaded
        self.on_task_llm = on_task_llm or default_task_llm
        self.artifact = artifact
        self.outcome = ChildOutcome(phase="run" if artifact else "load")
        # The run phase: the parent's clock and the handlers' usage at its edges.
        self.run_started_at: float | None = None
        self.run_ok = True
        self.run_calls = 0
        self.task_before = usage_now(self.on_task_llm) if artifact else None
        self.metric_before: dict | None = None
        self.reader = wire.FrameReader()
        self.outbox = bytearray(job)
        # start -> [program -> run (with an artifact)] -> load -> call ("loaded" seen)
        self.state = "start"
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
            self.state = "program" if self.artifact else "load"
        elif self.state in ("program", "run") and kind == "llm":
            self.run_calls += 1
            self.outbox += _llm_reply(self.on_task_llm, frame)
        elif self.state in ("load", "call") and kind == "llm":
            self.outbox += _llm_reply(self.on_llm, frame)
        elif self.state == "program" and kind == "run_started":
            self.run_started_at = time.monotonic()
            self.deadline = self.run_started_at + self.timeout_s
            self.state = "run"
        elif self.state in ("program", "run") and kind == "run_finished":
            self._run_finished(check_run_finished(frame), time.monotonic())
        elif self.state == "load" and kind == "loaded":
            loaded = frames.check_loaded(frame)
            self.outcome.loaded = loaded
            self.outcome.phase = self.state = "call"
            self.loaded_at = time.monotonic()
            # Loading and calling each get the full time limit.
            self.deadline = self.loaded_at + self.timeout_s
            if self.on_loaded is not None:
                self.on_loaded(loaded)
            if loaded_is_final(loaded) or not self.run_ok:
                self.finished = True
        elif self.state == "call" and kind == "result":
            self.outcome.result = frames.check_result(frame)
            self.outcome.parent_duration_ms = (time.monotonic() - self.loaded_at) * 1000
            self.finished = True
        else:
            raise wire.ProtocolError("unexpected_frame")

    # -- the run phase ----------------------------------------------------------

    def _measured(self, duration_ms: float | None, task_now: dict | None) -> dict:
        """The observation score() sees: the parent's clock and the task handler's usage."""
        if self.task_before is None or task_now is None:
            # A handler that does not count: only the requests served here are known.
            return {
                "duration_ms": duration_ms,
                "cost_usd": None,
                "model_calls": self.run_calls,
                "input_tokens": None,
                "output_tokens": None,
            }
        used = {key: task_now[key] - self.task_before[key] for key in task_now}
        return {
            "duration_ms": duration_ms,
            "cost_usd": round(used["cost_usd"], 10),
            "model_calls": used["model_calls"],
            "input_tokens": used["input_tokens"],
            "output_tokens": used["output_tokens"],
        }

    def _run_report(self, status: str, now: float, task_now: dict | None) -> dict:
        started = self.run_started_at
        return {
            "status": status,
            "duration_ms": None if started is None else (now - started) * 1000,
            "usage": usage_delta(self.task_before, task_now),
            "output_repr": None,
            "problem": None,
            "params": {},
            "exception": None,
            "traceback": [],
        }

    def _run_finished(self, frame: dict, now: float) -> None:
        task_now = usage_now(self.on_task_llm)
        run = self._run_report("ok", now, task_now)
        if frame["outcome"] == "returned":
            run["output_repr"] = frame["output_repr"][:OUTPUT_REPR_LIMIT]
        else:
            self.run_ok = False
            run["status"] = "error"
            run["problem"], run["params"] = frame["problem"], frame["params"]
            run["exception"] = frame.get("exception")
            run["traceback"] = frame.get("traceback", [])
        observation = self._measured(run["duration_ms"], task_now)
        self.outcome.run, self.outcome.observation = run, observation
        self.outbox += wire.encode({"type": "measured", "observation": observation})
        self.metric_before = usage_now(self.on_llm)
        self.outcome.phase = self.state = "load"
        # Loading metric.py gets the full time limit of its own.
        self.deadline = now + self.timeout_s

    def conclude(self) -> None:
        """After the child ended: the run's report if it never finished, the metric's usage."""
        now = time.monotonic()
        if self.artifact and self.outcome.run is None:
            status = "timeout" if self.outcome.failure == "timeout" else "error"
            run = self._run_report(status, now, usage_now(self.on_task_llm))
            run["problem"], run["params"] = self.outcome.failure, self.outcome.failure_params
            self.outcome.run = run
        if self.artifact:
            self.outcome.metric_usage = usage_delta(self.metric_before, usage_now(self.on_llm))

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


def child_limits(timeout_s: float, config: sandbox.SandboxConfig | None, windows: int = 2) -> dict:
    """job["limits"]: the sandbox's own, for a child that may load for timeout_s and
    then call score() for timeout_s (the CPU limit is only a backstop to our clock).
    With an artifact there are four such windows (start, run, load, call)."""
    limits_for = getattr(sandbox, "limits_for", None)
    if limits_for is not None:
        return limits_for(windows * timeout_s, config)
    return {"memory_mb": getattr(config or sandbox.SandboxConfig(), "memory_mb", 512)}


def build_job(source: str, case: Case, limits: dict, artifact: dict | None = None) -> bytes:
    """The framed job; raises ValueError when the case is not JSON or too large.

    With an artifact (contract.artifacts.Artifact.to_job()) the run phase comes first
    and the observation starts empty: the parent measures the run itself."""
    job = {
        "type": "job",
        "source": source,
        "filename": "metric.py",
        "case": case.to_job(),
        "limits": limits,
        "observation": case.measured() if artifact is None else _unmeasured(),
    }
    if artifact is not None:
        job["artifact"] = artifact
    try:
        return wire.encode(job, limit=wire.MAX_JOB_FRAME)
    except wire.ProtocolError:
        raise ValueError("job_too_large") from None
    except (TypeError, ValueError):
        raise ValueError("case_not_json") from None


def _unmeasured() -> dict:
    return dict.fromkeys(OBSERVATION_KEYS)


def run_child(
    source: str,
    case: Case,
    *,
    timeout_s: float,
    on_llm: LlmHandler | None = None,
    on_loaded: Callable[[dict], None] | None = None,
    sandbox_config: sandbox.SandboxConfig | None = None,
    artifact: dict | None = None,
    on_task_llm: LlmHandler | None = None,
) -> ChildOutcome:
    """Run score() of `source` on `case` in a new child; always returns, never leaves a process.

    on_llm answers the child's skynet.llm() requests (default: no_metric_model);
    on_loaded is called with the "loaded" frame as soon as it arrives. Raises
    ValueError for a case that cannot be sent, OSError when no child can start.
    With `artifact` (Artifact.to_job()) the child runs it first and score() gets
    its output; on_task_llm answers the run's llm() requests (default: no_task_model).
    """
    windows = 2 if artifact is None else 4
    job = build_job(source, case, child_limits(timeout_s, sandbox_config, windows), artifact)
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        launch = sandbox.prepare(
            RUNTIME_DIR,
            CHILD_SCRIPT,
            [str(child_sock.fileno())],
            timeout_s=windows * timeout_s,
            config=sandbox_config,
        )
        bwrap = getattr(launch, "mode", "") == "bwrap"
        session = _Session(
            job,
            timeout_s,
            on_llm or default_llm,
            on_loaded,
            bwrap,
            on_task_llm=on_task_llm,
            artifact=artifact is not None,
        )
        session.outcome.observation = case.measured() if artifact is None else _unmeasured()
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
        session.conclude()
        session.outcome.layers = list(dict.fromkeys([*launch.layers, *session.outcome.layers]))
    finally:
        child_sock.close()
        parent_sock.close()
    return session.outcome
