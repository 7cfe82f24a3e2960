"""Warm sandboxes: confined interpreters started ahead of time, one per check.

A `WarmSandbox` is a whole sandbox (sandbox: namespaces, uid, seccomp, rlimits,
its cgroup, a clean environment) running runtime/skynet_warm.py, with the runtime imported,
waiting on its control socket. A check takes one and opens its cases on it
(`open_case`): each case is a fresh process the sandbox forks, with the case's own socket
and output pipes, so it starts from the same clean state and can only ruin itself. After
the check the sandbox is killed whole (`close`); nothing of it serves another check.

`WarmPool` keeps sandboxes ready for one worker process and starts each replacement in
a background thread, off the check's critical path: forked by the pool's zygote
(contract.zygote) where there can be one, else each a launch of its own
(`WarmSandbox.start`). Either way a WarmSandbox holds its "body", which knows whether
it is alive, its processes, and how to kill it whole.
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass

import sandbox
from contract.zygote import Zygote, launch_on_socket, stderr_tail
from sandbox.runtime_path import RUNTIME_DIR
from skynet import wire

log = logging.getLogger("contract.warm")

WARM_SCRIPT = "skynet_warm.py"
START_TIMEOUT_S = 30.0
# The warm process's own CPU limit; each case lowers its own to its time limit's.
WARM_CPU_WINDOW_S = 2 * 600 + 60
# Case processes forked with each sandbox, ahead of its check: a check has three cases.
PREFORK = 3
STARTER_NICENESS = 10


class WarmStartFailed(RuntimeError):
    """A sandbox that was available did not start (`reason`: a crash reason code)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


@dataclass
class CaseEnds:
    """The worker's ends of one case: its socket and its stdout and stderr pipes."""

    sock: socket.socket
    stdout: int
    stderr: int
    slot: int = 0


class _Launched:
    """A warm sandbox that is a bubblewrap (or unconfined) launch of its own."""

    def __init__(self, launch: sandbox.Launch, proc: subprocess.Popen) -> None:
        self.launch = launch
        self.proc = proc
        self.layers = launch.layers
        self.limits = launch.limits

    def alive(self) -> bool:
        return self.proc.poll() is None

    def members(self) -> set[int]:
        group = self.launch.group
        return group.members() if group is not None else {self.proc.pid}

    def interpreters(self) -> set[int]:
        """The members that are Python (not bwrap, not the shell that joined the group)."""
        found = set()
        for pid in self.members():
            with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as fh:
                if WARM_SCRIPT.encode() in fh.read():
                    found.add(pid)
        return found

    def stderr_tail(self) -> str:
        return stderr_tail(self.proc)

    def kill(self) -> bool:
        try:
            clean = sandbox.kill(self.proc, self.launch)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        finally:
            if self.proc.stderr is not None:
                self.proc.stderr.close()
        return clean


class WarmSandbox:
    """A started sandbox waiting for cases. Not thread-safe: one check at a time."""

    def __init__(self, body, control: socket.socket):
        # _Launched, or a contract.zygote.Spawned: alive(), members(), kill(), layers...
        self.body = body
        self.control = control
        self.layers: list[str] = []
        self.closed = False
        self.started_at = time.monotonic()
        # Case processes forked ahead of the check, waiting for their job.
        self.waiting: list[CaseEnds] = []
        self._next_slot = 0

    @classmethod
    def start(
        cls,
        config: sandbox.SandboxConfig | None = None,
        runtime_dir: str = RUNTIME_DIR,
        *,
        prefork: int = PREFORK,
        preload: str | None = None,
    ) -> WarmSandbox:
        """Start a sandbox and wait until it is ready. Raises SandboxUnavailable when no
        sandbox can be had here, WarmStartFailed when this one did not come up. With
        `preload` "dspy" it imports dspy before it forks any case (a DSPy program's run)."""
        launch, proc, parent = launch_on_socket(
            runtime_dir, WARM_SCRIPT, timeout_s=WARM_CPU_WINDOW_S, config=config
        )
        return cls._ready(_Launched(launch, proc), parent, prefork, preload)

    @classmethod
    def from_zygote(cls, zygote, *, prefork: int = PREFORK) -> WarmSandbox:
        """A sandbox forked by `zygote` (contract.zygote.Zygote), ready like start()'s."""
        try:
            spawned = zygote.spawn(WARM_SCRIPT, [], timeout_s=WARM_CPU_WINDOW_S)
        except Exception as exc:
            raise WarmStartFailed("internal", str(exc)) from None
        return cls._ready(spawned, spawned.control, prefork)

    @classmethod
    def _ready(
        cls, body, control: socket.socket, prefork: int, preload: str | None = None
    ) -> WarmSandbox:
        warm = cls(body, control)
        try:
            warm._handshake(preload)
            warm.prefork(prefork)
        except BaseException:
            warm.close()
            raise
        return warm

    def _handshake(self, preload: str | None = None) -> None:
        self.control.settimeout(START_TIMEOUT_S)
        frame = {"type": "warm", "limits": self.body.limits}
        if preload:
            frame["preload"] = preload
        try:
            wire.send(self.control, frame)
            ready = wire.recv(self.control)
        except (OSError, wire.ProtocolError) as exc:
            raise WarmStartFailed("internal", f"{type(exc).__name__}: {exc}") from None
        if ready is None or ready.get("type") != "ready":
            reason = (ready or {}).get("reason")
            detail = self.body.stderr_tail()
            raise WarmStartFailed(reason if reason == "confine_failed" else "internal", detail)
        layers = ready.get("layers")
        self.layers = [str(x) for x in layers] if isinstance(layers, list) else []
        self.layers = list(dict.fromkeys([*self.body.layers, *self.layers]))
        self.control.settimeout(None)

    @property
    def alive(self) -> bool:
        return not self.closed and self.body.alive()

    def prefork(self, count: int) -> None:
        """Have `count` case processes forked now, to wait for their jobs."""
        for _ in range(count):
            self.waiting.append(self._fork_case())

    def open_case(self, job: dict, cpu_seconds: int) -> CaseEnds:
        """A case process for `job` (one forked ahead of time, else one forked now) with
        its job sent; the worker's ends of it. `ends.slot` names it to kill_case()."""
        ends = self.waiting.pop(0) if self.waiting else self._fork_case()
        frame = {"type": "case_job", "job": job, "cpu_seconds": cpu_seconds}
        data = wire.encode(frame, limit=wire.MAX_JOB_FRAME)
        # A case process that is gone (its sandbox died under it) closed its socket: the
        # case loop then reads that end and reports the case as crashed, as any other.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            ends.sock.sendall(data)
        return ends

    def _fork_case(self) -> CaseEnds:
        slot = self._next_slot
        self._next_slot += 1
        frame = wire.encode({"type": "case", "index": slot})
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            fds = array.array("i", [theirs.fileno(), out_write, err_write])
            # The descriptors ride on the frame's first bytes; the rest follows plainly.
            self.control.sendmsg(
                [frame[:4]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())]
            )
            self.control.sendall(frame[4:])
        except BaseException:
            mine.close()
            for fd in (out_read, err_read):
                os.close(fd)
            raise
        finally:
            theirs.close()
            os.close(out_write)
            os.close(err_write)
        return CaseEnds(mine, out_read, err_read, slot)

    def kill_case(self, index: int) -> None:
        """Stop a case that is past its time (the sandbox is killed whole after the check)."""
        with contextlib.suppress(OSError):
            wire.send(self.control, {"type": "kill", "index": index})

    def close(self) -> bool:
        """Kill the sandbox and everything in it, and reap it; True when nothing is left."""
        if self.closed:
            return True
        self.closed = True
        for ends in self.waiting:
            ends.sock.close()
            for fd in (ends.stdout, ends.stderr):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.waiting = []
        try:
            return self.body.kill()
        finally:
            with contextlib.suppress(OSError):
                self.control.close()

    def renice(self, niceness: int) -> None:
        """Set every process of the sandbox to `niceness` (where this worker may)."""
        for pid in self.body.members():
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, pid, niceness)

    def rss_bytes(self) -> int | None:
        """Resident memory of the sandbox's interpreters: the warm one and its cases."""
        total = None
        for pid in self.body.interpreters():
            try:
                with open(f"/proc/{pid}/status") as fh:
                    for line in fh:
                        if line.startswith("VmRSS:"):
                            total = (total or 0) + int(line.split()[1]) * 1024
            except OSError:
                continue
        return total


class WarmPool:
    """Sandboxes kept ready for one worker process (`size` of them: an artifact check
    takes two). `take()` hands one over at once when one is ready; `release()` takes it
    back, and the pool's thread kills it and starts its replacement, after the check.

    One long-lived thread starts them all: a sandbox dies with the *thread* that started
    it (bwrap's --die-with-parent is PR_SET_PDEATHSIG, which follows the parent thread),
    so a thread that ended after starting one would take it down.

    Where `sandbox.zygote_possible()` (and `zygote` is not turned off), that thread starts
    a zygote (contract.zygote) first and has it fork each sandbox, at a few milliseconds of
    CPU instead of a bubblewrap and an interpreter each; a sandbox the zygote cannot give
    is started on its own instead, just as confined.
    """

    def __init__(self, config_factory, size: int = 2, *, zygote: bool = True) -> None:
        self.config_factory = config_factory
        self.size = max(1, size)
        self.use_zygote = zygote
        self.zygote: Zygote | None = None
        self._zygote_tried = False
        # Sandboxes the zygote could not give, started alone instead (each one is logged).
        self.fallbacks = 0
        self._ready: deque[WarmSandbox] = deque()
        self._lock = threading.Condition()
        self._wanted = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._used: deque[WarmSandbox] = deque()
        self.failure: BaseException | None = None

    def fill(self) -> None:
        """Have the starter thread bring the pool up to `size` ready sandboxes."""
        with self._lock:
            if self._closed:
                return
            self._wanted = self.size
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._starter, name="warm-sandboxes", daemon=True
                )
                self._thread.start()
            self._lock.notify_all()

    def _starter(self) -> None:
        # Sandboxes start at a low priority, so starting the next one takes CPU only from
        # idle time, never from a check running now; once ready they get the normal one.
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), STARTER_NICENESS)
        while True:
            with self._lock:
                while not self._closed and not self._used and len(self._ready) >= self._wanted:
                    self._lock.wait()
                used, self._used = list(self._used), deque()
            for warm in used:
                warm.close()
            with self._lock:
                if self._closed:
                    return
                if len(self._ready) >= self._wanted:
                    continue
            try:
                warm = self._start_one(in_starter=True)
                warm.renice(0)
                failure = None
            except BaseException as exc:  # reported; take() then starts its own
                warm, failure = None, exc
            with self._lock:
                self.failure = failure
                if warm is not None and not self._closed:
                    self._ready.append(warm)
                    warm = None
                elif failure is not None:
                    # Do not spin on a sandbox that cannot start: the next take() asks again.
                    self._wanted = 0
                self._lock.notify_all()
            if warm is not None:
                warm.close()

    def take(self) -> WarmSandbox:
        """A ready sandbox: one from the pool, else one started now (in the caller's
        thread, which must outlive its use). Raises like WarmSandbox.start()."""
        warm = None
        stale = []
        with self._lock:
            while self._ready and warm is None:
                candidate = self._ready.popleft()
                if candidate.alive:
                    warm = candidate
                else:
                    stale.append(candidate)
        for candidate in stale:
            candidate.close()
        if warm is None:
            # None ready (the first check, or a burst): start one now, and refill after.
            self.fill()
            warm = self._start_one(in_starter=False)
        return warm

    def _start_one(self, *, in_starter: bool) -> WarmSandbox:
        """A new sandbox: from the zygote when there is one, else a launch of its own."""
        if in_starter:
            self._keep_zygote()
        zygote = self.zygote
        if zygote is not None and zygote.alive:
            try:
                return WarmSandbox.from_zygote(zygote)
            except WarmStartFailed as exc:
                if not zygote.alive:
                    # It died (killed from outside): the starter thread starts another.
                    log.warning("warm: the zygote died; this sandbox starts alone")
                else:
                    # Alive but failing: from now on every sandbox starts alone, as confined.
                    self.fallbacks += 1
                    self.zygote = None
                    zygote.close()
                    log.error("warm: the zygote gave no sandbox (%s); they start alone", exc)
        return WarmSandbox.start(self.config_factory())

    def _keep_zygote(self) -> None:
        """In the starter thread: (re)start the zygote where one can be had."""
        if not self.use_zygote or (self.zygote is not None and self.zygote.alive):
            return
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
        elif self._zygote_tried:
            return
        self._zygote_tried = True
        config = self.config_factory()
        if not sandbox.zygote_possible(config):
            return
        try:
            self.zygote = Zygote.start(config)
        except Exception as exc:  # every sandbox is then started alone, as confined
            log.warning("warm: no zygote (%s); each sandbox starts alone", exc)

    def release(self, warm: WarmSandbox) -> None:
        """Hand back a sandbox a check is done with: the starter thread kills it, off the
        check's path, before it starts the next one."""
        with self._lock:
            if self._thread is not None and not self._closed:
                self._used.append(warm)
                # The replacement starts now, after the check, never during one.
                self._wanted = self.size
                self._lock.notify_all()
                return
        warm.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            ready, self._ready = list(self._ready), deque()
            used, self._used = list(self._used), deque()
            self._lock.notify_all()
            thread = self._thread
        # A sandbox the starter is making now is closed by the starter itself; only then
        # may the zygote go (it would fail that sandbox half-way).
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=START_TIMEOUT_S)
        for warm in ready + used:
            warm.close()
        if self.zygote is not None:
            self.zygote.close()

    def idle(self) -> list[WarmSandbox]:
        with self._lock:
            return list(self._ready)

    def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """Block until the pool is full (benchmarks, tests); False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while len(self._ready) < self.size:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    return False
                self._lock.wait(remaining)
        return True
