"""Ending a sandbox: find its processes in /proc, kill them, reap what is left.

`kill()` ends one sandbox and everything it started; `reap_leftovers()` sweeps an exclusive
slot uid; `adopt_orphans()` makes the worker the subreaper whose zombies `_reap_adopted()`
collects.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass

from sandbox.config import Launch, SandboxConfig, _exclusive_uid, _host_uid

log = logging.getLogger("sandbox")


def reap_leftovers(config: SandboxConfig) -> int:
    """SIGKILL every process of an exclusive sandbox uid; return how many there were.

    For a slot whose previous worker died without cleaning up (only possible without
    bubblewrap). Does nothing unless the config's uid is exclusive.
    """
    if not _exclusive_uid(config):
        return 0
    uid = _host_uid(config)
    pids = {pid for pid, info in _snapshot().items() if info.uid == uid and info.state != "Z"}
    _signal(pids, signal.SIGKILL)
    return len(pids)


@dataclass
class _ProcInfo:
    ppid: int
    uid: int
    pgid: int
    sid: int
    state: str
    nested: bool  # lives in a pid namespace below ours


def _my_children() -> list[int] | None:
    """This process's children, from /proc/self/task/*/children; None where the kernel
    lacks CONFIG_PROC_CHILDREN. A few reads instead of a scan of every process."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
        for task in tasks:
            with contextlib.suppress(FileNotFoundError):  # a thread that just ended
                with open(f"/proc/self/task/{task}/children") as fh:
                    found += [int(pid) for pid in fh.read().split()]
    except OSError:
        return None
    return found


def _snapshot(pids=None) -> dict[int, _ProcInfo]:
    """/proc's view of `pids` (default: every process)."""
    procs: dict[int, _ProcInfo] = {}
    names = (
        (str(pid) for pid in pids)
        if pids is not None
        else (entry.name for entry in os.scandir("/proc") if entry.name.isdigit())
    )
    for name in names:
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                text = fh.read().decode("ascii", "replace")
        except OSError:
            continue  # exited meanwhile
        fields: dict[str, str] = {}
        for line in text.splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        try:
            nspid = fields.get("NSpid", "").split()
            procs[int(name)] = _ProcInfo(
                ppid=int(fields["PPid"]),
                uid=int(fields["Uid"].split()[0]),
                pgid=int(fields.get("NSpgid", "0").split()[0]),
                sid=int(fields.get("NSsid", "0").split()[0]),
                state=fields.get("State", "?")[:1],
                nested=len(nspid) > 1,
            )
        except (KeyError, ValueError, IndexError):
            continue
    return procs


def _pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _members(
    root_pid: int,
    root_alive: bool,
    uid: int | None,
    exclusive: bool,
    namespaces: set[str],
) -> set[int]:
    """Live processes that belong to the sandbox started as `root_pid`.

    Belonging: a descendant of the (not yet reaped) root, in its session or process group,
    in a pid namespace seen under it, or, with an exclusive uid, any process of that uid.
    Only processes of the sandbox uid are ever considered, so a reused pid, session or
    group number cannot make us signal a stranger.
    """
    procs = _snapshot()
    me = os.getpid()
    found: set[int] = set()
    if root_alive and root_pid in procs:
        found.add(root_pid)
        children: dict[int, list[int]] = {}
        for pid, info in procs.items():
            children.setdefault(info.ppid, []).append(pid)
        stack = [root_pid]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in found:
                    found.add(child)
                    stack.append(child)
    for pid, info in procs.items():
        if pid == me or (uid is not None and info.uid != uid):
            continue
        if info.sid == root_pid or info.pgid == root_pid or (exclusive and uid is not None):
            found.add(pid)
        elif info.nested and namespaces and _pid_namespace(pid) in namespaces:
            found.add(pid)
    live = set()
    for pid in found:
        info = procs.get(pid)
        if info is None or info.state == "Z" or (uid is not None and info.uid != uid):
            continue
        if info.nested:
            ns = _pid_namespace(pid)
            if ns:
                namespaces.add(ns)
        live.add(pid)
    return live


def _signal(pids, sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill(proc: subprocess.Popen, launch: Launch | None = None, *, timeout_s: float = 5.0) -> bool:
    """End the sandbox started as `proc` and everything it started; True if nothing is left.

    Safe to call at any time, also after the child exited by itself (then it only sweeps,
    about a millisecond). Under bubblewrap, killing bwrap's pid-namespace init makes the
    kernel kill every process in the namespace, setsid'd grandchildren included; the outer
    bwrap then reaps it and exits, so no zombie is orphaned. Without bubblewrap the tree is
    frozen with SIGSTOP first (a stopped process can neither fork nor setsid away), then
    killed; processes that left both the tree and the session are found only when the uid is
    exclusive. With a cgroup (launch.group) every process in it is killed, whatever it did.
    The launch's descriptors and cgroup are released. Read the Popen's pipes after this
    returns: with True, no writer is left.
    """
    try:
        return _kill(proc, launch, timeout_s)
    finally:
        if launch is not None:
            launch.release()


def _kill(proc: subprocess.Popen, launch: Launch | None, timeout_s: float) -> bool:
    uid = launch.uid if launch is not None else None
    exclusive = bool(launch and launch.uid_exclusive)
    root = proc.pid
    group = launch.group if launch is not None else None
    if group is not None:
        # Everything the sandbox started is in its cgroup, however it daemonized or whatever
        # uid it ended up as: that is the whole sandbox, bwrap included.
        group_clean = group.kill(timeout_s)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.1, timeout_s))
        _reap_adopted(root, uid, exclusive)
        # Nothing the sandbox started can be outside its group: no /proc scan needed.
        return group_clean and proc.poll() is not None
    root_alive = proc.poll() is None
    if uid is None and root_alive:
        info = _snapshot().get(root)
        uid = info.uid if info else None
    bwrap_root = launch.mode == "bwrap" if launch is not None else _comm(root) == "bwrap"
    namespaces: set[str] = set()
    deadline = time.monotonic() + timeout_s

    if root_alive and bwrap_root:
        inner = _members(root, True, uid, exclusive, namespaces) - {root}
        if inner:
            # bwrap itself is trusted and forks nothing once set up: leave it running so it
            # reaps its namespace init and exits by itself.
            _signal(inner, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.05, min(1.0, deadline - time.monotonic())))
    elif root_alive:
        stopped: set[int] = set()
        for _ in range(8):
            new = _members(root, True, uid, exclusive, namespaces) - stopped
            if not new:
                break
            _signal(new, signal.SIGSTOP)
            stopped |= new
        _signal(stopped - {root}, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    while True:
        left = _members(root, False, uid, exclusive, namespaces)
        if not left:
            _reap_adopted(root, uid, exclusive)
            return True
        if time.monotonic() > deadline:
            log.error("sandbox: processes %s outlived kill()", sorted(left))
            return False
        _signal(left, signal.SIGKILL)
        time.sleep(0.005)


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _reap_adopted(root: int, uid: int | None, exclusive: bool) -> None:
    """Reap sandbox zombies re-parented to this process (see adopt_orphans()).

    Two kinds: bwrap's namespace init, which the outer bwrap does not wait for (it exits as
    soon as it has read the command's status), recognised by living in a nested pid
    namespace, which no process we started with Popen does; and, without bwrap, orphans in
    the sandbox's session (or of an exclusive uid). Never another sandbox's Popen child,
    whose exit status belongs to its runner.
    """
    if uid is None:
        return
    me = os.getpid()
    for pid, info in _snapshot(_my_children()).items():
        if info.ppid != me or info.state != "Z" or info.uid != uid or pid == root:
            continue
        if info.nested or exclusive or info.sid == root:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def adopt_orphans() -> bool:
    """Make this worker process the reaper of its sandboxes' orphans; call once per worker.

    Without bubblewrap, killing a check's process tree orphans its processes, and the
    kernel hands them to the nearest subreaper or to pid 1. When pid 1 does not reap (a
    container whose entry point is not an init, like this one), their zombies pile up and
    keep counting against the slot uid's RLIMIT_NPROC until the next check cannot fork.
    bubblewrap orphans its namespace init at every exit in the same way. As subreaper, this
    process receives them all and kill() reaps them.
    """
    import ctypes

    pr_set_child_subreaper = 36
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(pr_set_child_subreaper, ctypes.c_ulong(1), 0, 0, 0) == 0
