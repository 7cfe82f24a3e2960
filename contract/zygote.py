"""A zygote per worker process: fresh check sandboxes in milliseconds instead of ~60 ms.

Starting bubblewrap and an interpreter and importing the runtime costs about 60 ms of CPU
per sandbox, which is what bounds checks per second on a small machine. The zygote
(runtime/skynet_zygote.py) is started once, inside bubblewrap, and forks each check its
own sandbox: new mount, pid, ipc, network and uts namespaces, a new /proc and a new,
noexec /tmp, every capability dropped, then the worker moves it into the check's cgroup
and the script (skynet_warm.py) applies the rest of the confinement (uid check, rlimits,
Landlock, the syscall filter loaded from the worker's program, a clean environment) as
every sandbox does. Nothing of one check sandbox is visible to another; each is killed whole after its
check (its pid namespace's init, and its cgroup).

Used only where `sandbox.zygote_possible()`: bwrap mode with a cgroup. Elsewhere every
warm sandbox is a bubblewrap of its own (contract.warm.WarmSandbox.start).
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import select
import signal
import socket
import struct
import subprocess
import threading

import sandbox
from sandbox.cgroups import CaseGroup
from sandbox.config import SITE_MOUNT
from sandbox.libraries import PRELOAD
from sandbox.runtime_path import RUNTIME_DIR
from skynet import wire

log = logging.getLogger("contract.zygote")

ZYGOTE_SCRIPT = "skynet_zygote.py"
START_TIMEOUT_S = 30.0
SPAWN_TIMEOUT_S = 10.0
_UCRED = struct.Struct("iII")  # struct ucred: pid, uid, gid


class ZygoteFailed(RuntimeError):
    """The zygote, or a sandbox it was asked for, did not come up."""


def launch_on_socket(
    runtime_dir: str, script: str, *, timeout_s: float, config, zygote: bool = False
) -> tuple[sandbox.Launch, subprocess.Popen, socket.socket]:
    """Start `script` confined (sandbox.prepare) with a control socket as its argv[1];
    the launch, the process (stderr piped, for a failed start's reason) and our end."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        launch = sandbox.prepare(
            runtime_dir,
            script,
            [str(child.fileno())],
            timeout_s=timeout_s,
            config=config,
            zygote=zygote,
        )
        try:
            proc = launch.popen(
                pass_fds=(child.fileno(),),
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except BaseException:
            launch.release()
            raise
    except BaseException:
        parent.close()
        raise
    finally:
        child.close()
    return launch, proc, parent


def stderr_tail(proc: subprocess.Popen) -> str:
    """What a process that failed to start wrote last (it is killed first)."""
    with contextlib.suppress(Exception):
        proc.kill()
        return (proc.communicate(timeout=2)[1] or b"").decode("utf-8", "replace")[-300:]
    return ""


class Spawned:
    """One check sandbox forked by the zygote: its control socket, its output pipes, its
    init's host pid (held as a pidfd) and its cgroup. `kill()` ends it whole."""

    def __init__(
        self,
        control: socket.socket,
        stderr: int,
        pidfd: int,
        pid: int,
        group: CaseGroup,
        limits: dict,
        layers: tuple[str, ...],
    ) -> None:
        self.control = control
        self.stderr = stderr
        self.pidfd = pidfd
        self.pid = pid
        self.group = group
        self.limits = limits
        self.layers = layers
        self.killed = False

    def alive(self) -> bool:
        if self.killed:
            return False
        readable, _, _ = select.select([self.pidfd], [], [], 0)
        return not readable

    def members(self) -> set[int]:
        return self.group.members()

    def interpreters(self) -> set[int]:
        return self.group.members()  # the warm interpreter and its cases, nothing else

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            os.set_blocking(self.stderr, False)
            return os.read(self.stderr, 1 << 16).decode("utf-8", "replace")[-300:]
        return ""

    def kill(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL the sandbox's init (the kernel then kills its whole pid namespace) and
        everything in its cgroup; True when nothing of it is left."""
        if self.killed:
            return True
        self.killed = True
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        clean = self.group.kill(timeout_s)
        gone, _, _ = select.select([self.pidfd], [], [], timeout_s)
        self.group.remove()
        for fd in (self.pidfd, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)
        return clean and bool(gone)


class Zygote:
    """The worker's zygote. `spawn()` is thread-safe; the zygote itself must be started
    by a thread that outlives it (bwrap's --die-with-parent follows the thread)."""

    def __init__(self, config: sandbox.SandboxConfig, launch, proc, control) -> None:
        self.config = config
        self.launch = launch
        self.proc = proc
        self.control = control
        self._lock = threading.Lock()
        self.closed = False

    @classmethod
    def start(cls, config: sandbox.SandboxConfig, runtime_dir: str = RUNTIME_DIR) -> Zygote:
        """Start a zygote and wait until it is ready. Raises SandboxUnavailable when no
        sandbox can be had here, ZygoteFailed when the zygote did not come up."""
        launch, proc, parent = launch_on_socket(
            runtime_dir, ZYGOTE_SCRIPT, timeout_s=START_TIMEOUT_S, config=config, zygote=True
        )
        zygote = cls(config, launch, proc, parent)
        try:
            parent.settimeout(START_TIMEOUT_S)
            tmp_size = int(config.tmp_size_mb) * 1024 * 1024
            first = {"type": "zygote", "tmp_size": tmp_size}
            if config.site_packages:
                # The common scoring libraries, imported once for every sandbox it forks.
                first.update(site=SITE_MOUNT, preload=list(PRELOAD))
            wire.send(parent, first)
            ready = wire.recv(parent)
            if ready is None or ready.get("type") != "ready":
                raise ZygoteFailed(f"the zygote did not start: {zygote._stderr_tail()}")
            parent.settimeout(None)
            # Nobody reads it from here on: a zygote that wrote much there must not block.
            proc.stderr.close()
        except (OSError, wire.ProtocolError) as exc:
            zygote.close()
            raise ZygoteFailed(f"the zygote did not start: {exc}") from None
        except BaseException:
            zygote.close()
            raise
        return zygote

    def _stderr_tail(self) -> str:
        return stderr_tail(self.proc)

    @property
    def alive(self) -> bool:
        return not self.closed and self.proc.poll() is None

    def spawn(self, script: str, args: list[str], *, timeout_s: float) -> Spawned:
        """A new check sandbox running `script args...` (a path in the runtime folder)
        once its `limits` are sent: moved into a new cgroup, waiting on its control
        socket. Raises ZygoteFailed when it does not come up."""
        group = sandbox.case_group(self.config)
        if group is None:
            raise ZygoteFailed("no cgroup for this check sandbox")
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # The kernel then attaches the sender's credentials, with its pid as seen here.
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        err_read, err_write = os.pipe()
        out_null = os.open(os.devnull, os.O_WRONLY)
        pidfd = -1
        try:
            frame = wire.encode({"type": "spawn", "script": script, "args": args})
            fds = array.array("i", [theirs.fileno(), out_null, err_write])
            with self._lock:
                if not self.alive:
                    raise ZygoteFailed("the zygote is gone")
                self.control.sendmsg(
                    [frame[:4]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())]
                )
                self.control.sendall(frame[4:])
            theirs.close()
            os.close(err_write)
            os.close(out_null)
            err_write = out_null = -1
            pid = _hello(mine)
            pidfd = os.pidfd_open(pid)
            group.add(pid)
            wire.send(mine, {"type": "go"})
        except BaseException as exc:
            theirs.close()
            for fd in (err_write, out_null, err_read, pidfd):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            mine.close()
            group.kill(1.0)
            group.remove()
            if isinstance(exc, (OSError, wire.ProtocolError)):
                raise ZygoteFailed(f"a check sandbox did not start: {exc}") from None
            raise
        limits = sandbox.limits_for(timeout_s, self.config, zygote=True)
        return Spawned(mine, err_read, pidfd, pid, group, limits, self.launch.layers)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self.control.close()
        sandbox.kill(self.proc, self.launch)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.proc.stderr.close()


def _hello(sock: socket.socket) -> int:
    """Read the new sandbox's hello; the host pid of its init, from the credentials."""
    sock.settimeout(SPAWN_TIMEOUT_S)
    frame, ancillary = wire.recv_with_ancillary(sock, socket.CMSG_SPACE(_UCRED.size))
    sock.settimeout(None)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 0)
    pid = None
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = _UCRED.unpack(payload[: _UCRED.size])[0]
    if frame is None:
        raise wire.ProtocolError("truncated_frame")
    if frame.get("type") != "hello" or not pid or pid <= 0:
        raise wire.ProtocolError(f"no hello: {frame.get('type')}")
    return pid
