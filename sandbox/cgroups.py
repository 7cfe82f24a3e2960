"""One memory and process limit for everything a sandbox starts: a cgroup per launch.

RLIMIT_AS and RLIMIT_NPROC hold per process (and per user), so six processes of one check
could each take the whole memory limit. A cgroup counts them together. For each launch the
worker makes a fresh group under its own cgroup, sets the check's limits on it, and starts
the sandbox inside it (`join_argv()`: a one-line shell that moves itself in, then execs);
everything the sandbox forks stays in the group, however it daemonizes, and `CaseGroup.kill`
ends them all. The sandbox's user cannot leave the group: only the worker may write the
group files, and under bubblewrap /sys is not even mounted.

cgroup v2 needs a parent whose cgroup.subtree_control hands down "memory" and "pids" (a
delegated cgroup, or set SKYNET_SANDBOX_CGROUP to one); cgroup v1 needs the memory and pids
hierarchies to be writable by the worker (root, usually). Where neither can be had,
`detect()` says why and the sandbox bounds the whole check with rlimits instead (see
sandbox.launch.limits_for).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import signal
import time
from dataclasses import dataclass

log = logging.getLogger("sandbox")

_counter = itertools.count()
# Moves the shell itself into each group file given before "--", then becomes the command.
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


@dataclass(frozen=True)
class CgroupPlan:
    """Where case groups are made: v2 one parent folder, v1 (memory folder, pids folder)."""

    version: int
    parents: tuple[str, ...]


@dataclass(frozen=True)
class Detected:
    plan: CgroupPlan | None
    reason: str = ""


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, fs type, super options, root within the hierarchy) of cgroup mounts."""
    found = []
    try:
        with open("/proc/self/mountinfo") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((fields[4], tail[0], tail[2], fields[3]))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per controller ("" key: the v2 hierarchy)."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            paths[controller] = parts[2]
    return paths


def _join(mount: str, root: str, path: str) -> str:
    if root != "/" and path.startswith(root):
        path = path[len(root) :] or "/"
    return os.path.normpath(mount + "/" + path.lstrip("/"))


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _probe_mkdir(parent: str, needed: tuple[str, ...]) -> str:
    """Make and remove a test group under `parent`; "" when that works and it has the
    files named in `needed`, else why not."""
    probe = os.path.join(parent, f"skynet-probe-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        os.mkdir(probe)
    except OSError as exc:
        return f"cannot create a cgroup under {parent}: {exc.strerror}"
    try:
        missing = [name for name in needed if not os.path.exists(os.path.join(probe, name))]
        return f"{parent} gives its children no {', '.join(missing)}" if missing else ""
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)


def _detect_v2(parent: str) -> str:
    try:
        delegated = _read(os.path.join(parent, "cgroup.subtree_control")).split()
    except OSError as exc:
        return f"cannot read {parent}/cgroup.subtree_control: {exc.strerror}"
    missing = [c for c in ("memory", "pids") if c not in delegated]
    if missing:
        # Enabling them fails (EBUSY) while the parent holds processes, as a worker's own
        # cgroup does; it works for a delegated parent that is empty.
        with contextlib.suppress(OSError):
            _write(
                os.path.join(parent, "cgroup.subtree_control"), " ".join(f"+{c}" for c in missing)
            )
        try:
            delegated = _read(os.path.join(parent, "cgroup.subtree_control")).split()
        except OSError:
            delegated = []
        if any(c not in delegated for c in ("memory", "pids")):
            return f"{parent} does not delegate the memory and pids controllers"
    return _probe_mkdir(parent, ("memory.max", "pids.max", "cgroup.procs"))


def _sweep(parents: tuple[str, ...]) -> None:
    """Remove case groups of workers that died before removing them (they are empty once
    their processes are gone; a group still in use is never empty, so rmdir refuses)."""
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                parts = entry.name.split("-")
                if len(parts) != 4 or parts[0] != "skynet" or not parts[1].isdigit():
                    continue
                try:
                    os.kill(int(parts[1]), 0)
                    continue  # its worker lives: the group is (or will be) its to remove
                except ProcessLookupError:
                    pass
                except PermissionError:
                    continue
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def detect(override: str | None = None) -> Detected:
    """Where this worker can make case groups, or why it cannot (never raises)."""
    found = _detect(override)
    if found.plan is not None:
        _sweep(found.plan.parents)
    return found


def _detect(override: str | None) -> Detected:
    if override:
        reason = _detect_v2(override)
        return Detected(None if reason else CgroupPlan(2, (override,)), reason)
    mounts, own = _mounts(), _own_cgroups()
    reasons = []
    for mount, fstype, _options, root in mounts:
        if fstype == "cgroup2" and "" in own:
            parent = _join(mount, root, own[""])
            reason = _detect_v2(parent)
            if not reason:
                return Detected(CgroupPlan(2, (parent,)))
            reasons.append(reason)
    v1: dict[str, str] = {}
    for mount, fstype, options, root in mounts:
        for controller in ("memory", "pids"):
            if fstype == "cgroup" and controller in options.split(",") and controller in own:
                v1.setdefault(controller, _join(mount, root, own[controller]))
    if len(v1) == 2:
        memory_reason = _probe_mkdir(v1["memory"], ("memory.limit_in_bytes", "cgroup.procs"))
        pids_reason = _probe_mkdir(v1["pids"], ("pids.max", "cgroup.procs"))
        if not memory_reason and not pids_reason:
            return Detected(CgroupPlan(1, (v1["memory"], v1["pids"])))
        reasons += [r for r in (memory_reason, pids_reason) if r]
    elif not reasons:
        reasons.append("no cgroup hierarchy with the memory and pids controllers is mounted")
    return Detected(None, "; ".join(reasons))


class CaseGroup:
    """The cgroup (v2) or pair of cgroups (v1) of one launch."""

    def __init__(self, plan: CgroupPlan, memory_bytes: int, max_processes: int) -> None:
        name = f"skynet-{os.getpid()}-{next(_counter)}-{secrets.token_hex(3)}"
        self.version = plan.version
        self.dirs = [os.path.join(parent, name) for parent in plan.parents]
        made: list[str] = []
        try:
            for folder in self.dirs:
                os.mkdir(folder, 0o755)
                made.append(folder)
            if self.version == 2:
                (folder,) = self.dirs
                _write(os.path.join(folder, "memory.max"), str(memory_bytes))
                _write(os.path.join(folder, "pids.max"), str(max_processes))
                for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                    with contextlib.suppress(OSError):
                        _write(os.path.join(folder, name), value)
            else:
                memory, pids = self.dirs
                _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
                with contextlib.suppress(OSError):  # absent without swap accounting
                    _write(os.path.join(memory, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                _write(os.path.join(pids, "pids.max"), str(max_processes))
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            raise

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(folder, "cgroup.procs") for folder in self.dirs]

    def join_argv(self, argv: list[str]) -> list[str]:
        """`argv`, started from inside this group (the shell moves itself in first)."""
        return ["/bin/sh", "-c", _JOIN, "sh", *self.procs_files, "--", *argv]

    def add(self, pid: int) -> None:
        """Move process `pid` into this group (the processes it starts afterwards follow)."""
        for path in self.procs_files:
            _write(path, str(pid))

    def members(self) -> set[int]:
        found: set[int] = set()
        for path in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                found |= {int(line) for line in _read(path).split()}
        return found

    def kill(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process in the group until none is left; True when empty."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(os.path.join(self.dirs[0], "cgroup.kill"), "1")
        deadline = time.monotonic() + timeout_s
        while True:
            left = self.members()
            if not left:
                return True
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                log.error("sandbox: processes %s outlived their cgroup's kill", sorted(left))
                return False
            time.sleep(0.002)

    def remove(self) -> None:
        """Remove the group; its processes must be gone (reaped zombies leave at once)."""
        for folder in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.002)
            else:
                log.warning("sandbox: could not remove cgroup %s", folder)
