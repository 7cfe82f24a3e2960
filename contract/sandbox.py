"""How a child process that runs untrusted code is confined.

The runner asks this module for the exact command line and environment of a child, starts it
itself, and asks it again to make sure nothing is left when the check is over::

    cfg = SandboxConfig()                      # or SandboxConfig.for_slot(n)
    launch = prepare(runtime_dir, "skynet_child.py", [str(fd)], timeout_s=T, config=cfg)
    proc = subprocess.Popen(launch.argv, env=launch.env, pass_fds=(fd,),
                            start_new_session=True, stdin=DEVNULL, stdout=PIPE, stderr=PIPE)
    send job frame {"limits": limits_for(T, cfg), ...} on the socket
    ... on timeout, or always once done:  kill(proc, launch)

and the child's first statement is `skynet._confine.apply(job["limits"])`.

Layers (stable codes, see `LAYERS`), from the outside in:

* ``namespaces``: bubblewrap, started *as the sandbox uid* so it works through unprivileged
  user namespaces. New pid, network, ipc, uts, mount, cgroup and user namespaces; the child
  sees only /usr (the interpreter), the runtime folder at /opt/skynet (read-only, with
  pyseccomp.py bound next to it), an empty size-capped /tmp, a private /proc and a minimal
  /dev. No /work, /root, /etc/shadow or database. --die-with-parent.
* ``unprivileged_uid``: the sandbox runs as uid 65534 (or one uid per slot), switched with
  util-linux `setpriv` in front of the command, so `Popen` keeps its fast vfork path (no
  preexec_fn, no user=). Without setpriv a two-line Python trampoline does the same.
* ``clean_env``: the environment is built from scratch (`sandbox_env()`), never inherited.
* ``rlimits``, ``seccomp``, ``pdeathsig``: set inside the child by `_confine.apply()`.

Where bubblewrap or user namespaces do not work, the launch falls back to the other layers,
logs a loud warning on the "contract.sandbox" logger once per process, and says so in
`Launch.layers`; `self_test()` probes what actually holds.

Process limits and uids: RLIMIT_NPROC is counted per uid *and per user namespace*. Under
bubblewrap each sandbox has its own user namespace, so the shared uid 65534 is fine: a fork
bomb in one check hits its own limit and never starves the next (measured on this kernel).
Without bubblewrap the count is shared by every process of the uid, so concurrent slots
should each use their own uid: `SandboxConfig.for_slot(n)` gives uid 60000+n and lets
`kill()` sweep every process of that uid.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import logging
import math
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

log = logging.getLogger("contract.sandbox")

LAYERS = ("namespaces", "unprivileged_uid", "seccomp", "rlimits", "pdeathsig", "clean_env")

# Layers only the child can set up; `_confine.apply()` reports them and fails closed when one
# listed in limits["required"] does not hold.
CHILD_LAYERS = ("unprivileged_uid", "seccomp", "rlimits", "pdeathsig", "clean_env")

NOBODY = 65534
# Uids for per-slot sandboxes: 60000-64999 is Debian's "globally allocated" range, unused on
# almost every system and below 65536, so it also exists in a typical container's uid map.
SLOT_UID_BASE = 60000

# Where the runtime folder appears inside the sandbox (the host path stays hidden).
RUNTIME_MOUNT = "/opt/skynet"

DEFAULT_RUNTIME_DIR = str(Path(__file__).resolve().parent.parent / "runtime")

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
}

_PYTHON_FLAGS = ("-E", "-s", "-B")

# Used when setpriv is missing: switch uid without preexec_fn, then exec the real command.
_DROP_PRIVILEGES_SRC = (
    "import os,sys;u,g=int(sys.argv[1]),int(sys.argv[2]);os.setgroups([]);"
    "os.setresgid(g,g,g);os.setresuid(u,u,u);os.execv(sys.argv[3],sys.argv[3:])"
)


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
    memory_mb: int = 512
    # Host uid/gid the sandbox runs as when the runner is root. None: keep the runner's uid
    # (only sensible when the runner itself is unprivileged).
    uid: int | None = NOBODY
    gid: int = NOBODY
    # True when no other sandbox runs as this uid at the same time: kill() then removes every
    # process of the uid, which is what makes the no-namespace fallback leak-proof.
    uid_exclusive: bool = False
    max_processes: int = 64
    open_files: int = 64
    file_size_bytes: int = 1 << 20
    tmp_size_mb: int = 16
    use_bwrap: bool = True  # False forces the fallback (benchmarks, tests)
    seccomp: bool = True
    # Extra host paths made visible read-only at the same path (e.g. a venv's site-packages).
    extra_ro_binds: tuple[str, ...] = ()
    # Byte-compile the runtime folder once per process, so the child (-B, read-only) need not.
    precompile: bool = True

    @classmethod
    def for_slot(cls, slot: int, *, base_uid: int = SLOT_UID_BASE, **changes) -> SandboxConfig:
        """A config with a uid of its own for concurrency slot `slot` (0, 1, 2...)."""
        if slot < 0:
            raise ValueError("slot must be >= 0")
        return replace(cls(), uid=base_uid + slot, uid_exclusive=True, **changes)


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    layers: tuple[str, ...] = field(default_factory=tuple)
    # "bwrap" or "fallback"
    mode: str = "fallback"
    # Host uid the sandboxed processes run as (kill() only ever signals processes of it).
    uid: int | None = None
    uid_exclusive: bool = False


def sandbox_env() -> dict[str, str]:
    """The complete environment of a sandboxed child."""
    return dict(_SANDBOX_ENV)


# --- detection (cached: one probe run per process and config) ---


@functools.lru_cache(maxsize=8)
def _which(name: str) -> str | None:
    search = os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    )
    return shutil.which(name, path=search)


@functools.lru_cache(maxsize=1)
def _pyseccomp_file() -> str | None:
    """The pyseccomp.py file to bind into the child, if pyseccomp and libseccomp exist."""
    spec = importlib.util.find_spec("pyseccomp")
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    import ctypes.util

    if ctypes.util.find_library("seccomp") is None:
        log.warning("sandbox: libseccomp is not installed; the seccomp layer is off")
        return None
    return spec.origin


def _world_can_read(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IROTH) and _world_can_reach(os.path.dirname(os.path.realpath(path)))


def _pyseccomp_for(config: SandboxConfig) -> str | None:
    """pyseccomp.py for this config's child, if enabled and readable by its uid.

    Under bwrap the bind is opened as the sandbox uid, and without bwrap the child imports
    the file itself: a venv under /root would break every launch, so leave seccomp out and
    say so instead.
    """
    source = _pyseccomp_file() if config.seccomp else None
    if source and _switches_uid(config) and not _world_can_read(source):
        log.warning(
            "sandbox: %s is not readable by uid %s; the seccomp layer is off",
            source,
            config.uid,
        )
        return None
    return source


def _switches_uid(config: SandboxConfig) -> bool:
    return os.geteuid() == 0 and config.uid is not None


def _host_uid(config: SandboxConfig) -> int:
    if os.geteuid() == 0 and config.uid is not None:
        return config.uid
    return os.getuid()


def _privdrop_argv(config: SandboxConfig) -> list[str]:
    """Command prefix that starts the rest as the sandbox uid (empty if not root)."""
    if os.geteuid() != 0 or config.uid is None:
        return []
    uid, gid = str(config.uid), str(config.gid)
    setpriv = _which("setpriv")
    if setpriv:
        return [
            setpriv,
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    return [config.python, "-I", "-S", "-c", _DROP_PRIVILEGES_SRC, uid, gid]


def _uid_unprivileged(config: SandboxConfig) -> bool:
    return _host_uid(config) != 0


@functools.lru_cache(maxsize=4)
def _bwrap_options(bwrap: str) -> frozenset[str]:
    """Options this bwrap knows (--disable-userns needs 0.8, --size 0.5)."""
    try:
        done = subprocess.run(
            [bwrap, "--help"], capture_output=True, timeout=10, check=False, env=sandbox_env()
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    return frozenset(word for word in text.split() if word.startswith("--"))


# Hardening that older bubblewraps lack; left out (with a warning) rather than failing.
_OPTIONAL_FLAGS = frozenset({"--unshare-cgroup-try", "--disable-userns", "--size"})

_NAMESPACE_FLAGS = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    # The sandbox may not create user namespaces of its own (kernel attack surface).
    "--disable-userns",
    "--die-with-parent",
    # setsid() for the command: no controlling terminal to push input into (TIOCSTI).
    "--new-session",
    "--hostname",
    "sandbox",
)


def _system_binds(config: SandboxConfig) -> list[str]:
    """Read-only view of the interpreter: /usr, the merged-/usr links, and the loader cache."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(path):
            args += ["--ro-bind", os.path.realpath(path), path]
    extra = set(config.extra_ro_binds)
    for candidate in (config.python, os.path.realpath(config.python)):
        prefix = os.path.dirname(os.path.dirname(os.path.abspath(candidate)))
        if prefix != "/usr" and not prefix.startswith("/usr/") and prefix != "/":
            extra.add(prefix)
    for path in sorted(extra):
        args += ["--ro-bind", path, path]
    return args


def _supported(bwrap: str, args: list[str]) -> list[str]:
    """Drop optional options (and the value of --size) this bwrap does not know."""
    known = _bwrap_options(bwrap)
    missing = {flag for flag in _OPTIONAL_FLAGS if flag not in known}
    if not missing:
        return args
    kept: list[str] = []
    skip = 0
    for arg in args:
        if skip:
            skip -= 1
        elif arg in missing:
            skip = 1 if arg == "--size" else 0
        else:
            kept.append(arg)
    return kept


def _bwrap_prefix(config: SandboxConfig, bwrap: str) -> list[str]:
    return _supported(bwrap, [bwrap, *_NAMESPACE_FLAGS, *_system_binds(config)])


def _bwrap_tail(config: SandboxConfig, bwrap: str) -> list[str]:
    """Mounts made after the runtime binds, and the environment."""
    args = [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(config.tmp_size_mb * 1024 * 1024),
        "--tmpfs",
        "/tmp",
        # bwrap leaves its root tmpfs and /dev writable and without a size cap: make them
        # read-only so the only writable place is the capped /tmp.
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        "/tmp",
        "--clearenv",
    ]
    for key, value in _SANDBOX_ENV.items():
        args += ["--setenv", key, value]
    return _supported(bwrap, args)


@dataclass(frozen=True)
class _Plan:
    mode: str
    bwrap: str | None
    privdrop: tuple[str, ...]
    layers: tuple[str, ...]
    reason: str


_plan_lock = threading.Lock()
_plans: dict[SandboxConfig, _Plan] = {}


def _plan(config: SandboxConfig) -> _Plan:
    with _plan_lock:
        plan = _plans.get(config)
        if plan is None:
            plan = _plans[config] = _detect(config)
    return plan


def _detect(config: SandboxConfig) -> _Plan:
    privdrop = tuple(_privdrop_argv(config))
    child_layers = ["rlimits", "pdeathsig", "clean_env"]
    if _uid_unprivileged(config):
        child_layers.append("unprivileged_uid")
    else:
        log.warning("sandbox: the child runs as root (SandboxConfig.uid is None)")
    if _pyseccomp_for(config):
        child_layers.append("seccomp")
    if _uid_unprivileged(config) and not _world_can_run(config.python):
        log.error(
            "sandbox: interpreter %s is not readable by uid %s; set SandboxConfig.python",
            config.python,
            _host_uid(config),
        )

    reason = ""
    bwrap = _which("bwrap") if config.use_bwrap else None
    if not config.use_bwrap:
        reason = "bubblewrap disabled by SandboxConfig.use_bwrap"
    elif bwrap is None:
        reason = "bubblewrap (bwrap) is not installed"
    else:
        reason = _probe_bwrap(config, bwrap, privdrop)
    if not reason and bwrap:
        missing = sorted(_OPTIONAL_FLAGS - _bwrap_options(bwrap))
        if missing:
            log.warning("sandbox: this bwrap lacks %s; that hardening is off", ", ".join(missing))
    if reason:
        log.warning(
            "SANDBOX DEGRADED: %s; running checks WITHOUT namespaces (no filesystem, network "
            "or pid isolation), only with: %s",
            reason,
            ", ".join(name for name in LAYERS if name in child_layers),
        )
        return _Plan("fallback", None, privdrop, _ordered(child_layers), reason)
    return _Plan("bwrap", bwrap, privdrop, _ordered([*child_layers, "namespaces"]), "")


def _probe_bwrap(config: SandboxConfig, bwrap: str, privdrop: tuple[str, ...]) -> str:
    """Run `true` through the real bwrap command line; return why it fails, or ""."""
    true = "/usr/bin/true" if os.path.exists("/usr/bin/true") else "/bin/true"
    argv = [*privdrop, *_bwrap_prefix(config, bwrap), *_bwrap_tail(config, bwrap), "--", true]
    try:
        done = subprocess.run(
            argv,
            env=sandbox_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    _reap_adopted(-1, _host_uid(config), False)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[:300]
        return (
            f"bubblewrap does not work as uid {_host_uid(config)} ({detail}); unprivileged "
            "user namespaces may be off (sysctl kernel.unprivileged_userns_clone, "
            "user.max_user_namespaces, or an AppArmor userns restriction)"
        )
    return ""


def _ordered(names) -> tuple[str, ...]:
    chosen = set(names)
    return tuple(name for name in LAYERS if name in chosen)


def active_layers(config: SandboxConfig | None = None) -> tuple[str, ...]:
    """The layers a launch with this config gets (detection is cached; no child is run)."""
    return _plan(config or SandboxConfig()).layers


# --- the runner's API ---


def limits_for(timeout_s: float, config: SandboxConfig | None = None) -> dict:
    """The dict the runner sends as job["limits"]; the child passes it to _confine.apply().

    Shape (all JSON-serialisable)::

        {
          "version": 1,
          "memory_mb": 512,            # RLIMIT_AS, MiB
          "cpu_seconds": ceil(T) + 1,  # RLIMIT_CPU soft (hard = soft + 1 -> SIGKILL)
          "file_size_bytes": 1048576,  # RLIMIT_FSIZE (writes past it raise OSError EFBIG)
          "open_files": 64,            # RLIMIT_NOFILE
          "max_processes": 64,         # RLIMIT_NPROC (per sandbox under bwrap, see module doc)
          "core_bytes": 0,             # RLIMIT_CORE
          "uid": 65534, "gid": 65534,  # drop to these if the child still is root, else None
          "seccomp": True,             # install the syscall filter
          "pyseccomp_path": "/...",    # where to import pyseccomp from outside bwrap
          "subreaper": False,          # fallback only: adopt orphans (PR_SET_CHILD_SUBREAPER)
          "env_keys": [...],           # the only environment variables the child may have
          "required": [...],           # layers apply() must set up, or raise (fail closed)
        }
    """
    cfg = config or SandboxConfig()
    plan = _plan(cfg)
    root = os.geteuid() == 0
    return {
        "version": 1,
        "memory_mb": int(cfg.memory_mb),
        "cpu_seconds": math.ceil(timeout_s) + 1,
        "file_size_bytes": int(cfg.file_size_bytes),
        "open_files": int(cfg.open_files),
        "max_processes": int(cfg.max_processes),
        "core_bytes": 0,
        "uid": cfg.uid if root else None,
        "gid": cfg.gid if root and cfg.uid is not None else None,
        "seccomp": bool(cfg.seccomp),
        "pyseccomp_path": _pyseccomp_for(cfg),
        # Without a pid namespace the child adopts its orphans so kill() finds them.
        "subreaper": plan.mode == "fallback",
        # bwrap adds PWD for its --chdir.
        "env_keys": sorted([*_SANDBOX_ENV, "PWD"]),
        "required": [name for name in plan.layers if name in CHILD_LAYERS],
    }


_precompiled: set[str] = set()


def _precompile(runtime_dir: str, python: str) -> None:
    """Write the runtime's .pyc files once, so the child need not compile on every start.

    The child runs with -B on a read-only view and would otherwise recompile each module
    at each start (milliseconds per check). Only done when this interpreter's version is the
    sandbox interpreter's, since a .pyc is only read by the version that wrote it.
    """
    if runtime_dir in _precompiled:
        return
    _precompiled.add(runtime_dir)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if os.path.basename(os.path.realpath(python)) != version:
        return
    if not os.access(runtime_dir, os.W_OK):
        return
    import compileall

    with contextlib.suppress(OSError):
        compileall.compile_dir(runtime_dir, quiet=2, workers=1)


def _runtime_binds(runtime_dir: str, config: SandboxConfig) -> list[str]:
    """Bind each entry of the runtime folder, plus pyseccomp, under RUNTIME_MOUNT.

    Entry by entry rather than the folder whole, because pyseccomp.py has to sit next to
    them and a file cannot be mounted into a read-only bind. The top-level __pycache__ is
    left out so pyseccomp's own .pyc can be placed there.
    """
    args: list[str] = []
    names = sorted(os.listdir(runtime_dir))
    for name in names:
        if name.startswith(".") or name == "__pycache__":
            continue
        args += ["--ro-bind", os.path.join(runtime_dir, name), f"{RUNTIME_MOUNT}/{name}"]
    source = _pyseccomp_for(config)
    if source and "pyseccomp.py" not in names:
        args += ["--ro-bind", source, f"{RUNTIME_MOUNT}/pyseccomp.py"]
        cached = importlib.util.cache_from_source(source)
        if os.path.exists(cached) and (not _switches_uid(config) or _world_can_read(cached)):
            target = f"{RUNTIME_MOUNT}/__pycache__/{os.path.basename(cached)}"
            args += ["--ro-bind", cached, target]
    return args


def prepare(
    runtime_dir: str,
    script: str,
    args: list[str],
    *,
    timeout_s: float,
    config: SandboxConfig | None = None,
) -> Launch:
    """Return how to start `runtime_dir/script args...` confined.

    `script` is a path relative to runtime_dir; the child sees runtime_dir on sys.path (as
    the script's folder). File descriptors passed with Popen(pass_fds=...) keep their number
    inside the sandbox. `timeout_s` is the runner's wall clock, which the runner enforces
    itself (with kill()); the CPU limit derived from it travels in limits_for().
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    cfg = config or SandboxConfig()
    plan = _plan(cfg)
    runtime_dir = os.path.realpath(runtime_dir)
    if _uid_unprivileged(cfg) and os.geteuid() == 0:
        # bwrap opens its bind sources as the sandbox uid, and without bwrap the child
        # reads them directly: a folder under /root would make every check fail to start.
        if not _world_can_reach(runtime_dir, need_read=True):
            raise ValueError(
                f"runtime folder {runtime_dir} is not readable by uid {cfg.uid}: "
                "it and every folder above it need o+rx"
            )
    if cfg.precompile:
        _precompile(runtime_dir, cfg.python)
    env = sandbox_env()
    exclusive = _exclusive_uid(cfg)
    common = dict(layers=plan.layers, uid=_host_uid(cfg), uid_exclusive=exclusive)
    if plan.mode == "bwrap" and plan.bwrap:
        argv = [
            *plan.privdrop,
            *_bwrap_prefix(cfg, plan.bwrap),
            *_runtime_binds(runtime_dir, cfg),
            *_bwrap_tail(cfg, plan.bwrap),
            "--",
            cfg.python,
            *_PYTHON_FLAGS,
            f"{RUNTIME_MOUNT}/{script}",
            *args,
        ]
        return Launch(argv=argv, env=env, mode="bwrap", **common)
    if exclusive:
        # Without a pid namespace a worker killed hard can leave grandchildren behind;
        # the slot's next launch clears them (its uid is this slot's alone).
        reap_leftovers(cfg)
    argv = [*plan.privdrop, cfg.python, *_PYTHON_FLAGS, os.path.join(runtime_dir, script), *args]
    return Launch(argv=argv, env=env, mode="fallback", **common)


def _exclusive_uid(config: SandboxConfig) -> bool:
    # Never treat our own uid as the sandbox's: sweeping it would kill the worker itself.
    uid = _host_uid(config)
    return config.uid_exclusive and uid not in (0, os.getuid())


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


# --- ending a sandbox ---


@dataclass
class _ProcInfo:
    ppid: int
    uid: int
    pgid: int
    sid: int
    state: str
    nested: bool  # lives in a pid namespace below ours


def _snapshot() -> dict[int, _ProcInfo]:
    procs: dict[int, _ProcInfo] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as fh:
                text = fh.read().decode("ascii", "replace")
        except OSError:
            continue  # exited meanwhile
        fields: dict[str, str] = {}
        for line in text.splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        try:
            nspid = fields.get("NSpid", "").split()
            procs[int(entry.name)] = _ProcInfo(
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
    exclusive. Read the Popen's pipes after this returns: with True, no writer is left.
    """
    uid = launch.uid if launch is not None else None
    exclusive = bool(launch and launch.uid_exclusive)
    root = proc.pid
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
    for pid, info in _snapshot().items():
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


# --- self test ---

_SELFTEST_SECRET_VAR = "SKYNET_SANDBOX_SELFTEST_SECRET"


def _send_frame(sock: socket.socket, payload: dict) -> None:
    data = json.dumps(payload).encode("utf-8")
    sock.sendall(len(data).to_bytes(4, "big") + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(size - len(buf))
        if not chunk:
            raise EOFError("the sandboxed child closed its socket")
        buf += chunk
    return bytes(buf)


def _recv_frame(sock: socket.socket) -> dict:
    size = int.from_bytes(_recv_exact(sock, 4), "big")
    return json.loads(_recv_exact(sock, size).decode("utf-8"))


def self_test(
    config: SandboxConfig | None = None,
    *,
    runtime_dir: str | None = None,
    timeout_s: float = 10.0,
) -> dict:
    """Start one child exactly as the runner does and probe the walls from inside.

    Returns {"layers": [...], "probes": {name: bool}, "mode": ..., "expected_layers": [...]}
    where a probe is True when the wall held: network_blocked (TCP to a 127.0.0.1 listener
    opened here), shadow_unreadable, secrets_absent (a fake secret planted in this process's
    environment), project_hidden, uid_unprivileged, host_processes_hidden, root_readonly.
    "layers" are the layers confirmed from inside the child.
    """
    cfg = config or SandboxConfig()
    rd = runtime_dir or DEFAULT_RUNTIME_DIR
    secret = "skynet-selftest-" + secrets.token_hex(8)
    result: dict = {"layers": [], "probes": {}, "mode": None, "expected_layers": []}
    with contextlib.ExitStack() as stack:
        listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        parent_sock, child_sock = socket.socketpair()
        stack.enter_context(parent_sock)
        fd = child_sock.fileno()
        previous = os.environ.get(_SELFTEST_SECRET_VAR)
        os.environ[_SELFTEST_SECRET_VAR] = secret  # must not reach the child
        try:
            launch = prepare(rd, "skynet/_confine.py", [str(fd)], timeout_s=timeout_s, config=cfg)
            proc = subprocess.Popen(
                launch.argv,
                env=launch.env,
                pass_fds=(fd,),
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        finally:
            child_sock.close()
            if previous is None:
                os.environ.pop(_SELFTEST_SECRET_VAR, None)
            else:
                os.environ[_SELFTEST_SECRET_VAR] = previous
        result["mode"] = launch.mode
        result["expected_layers"] = list(launch.layers)
        reply: dict = {}
        try:
            job = {
                "limits": limits_for(timeout_s, cfg),
                "probe": {
                    "port": listener.getsockname()[1],
                    "secret": secret,
                    "project_file": os.path.abspath(__file__),
                    "host_pid": os.getpid(),
                },
            }
            parent_sock.settimeout(timeout_s)
            _send_frame(parent_sock, job)
            reply = _recv_frame(parent_sock)
        except (OSError, EOFError, ValueError) as exc:
            result["error"] = f"no answer from the sandboxed child: {exc}"
        finally:
            kill(proc, launch)
            stderr = b""
            with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
                stderr = proc.communicate(timeout=2)[1] or b""
        if stderr.strip() and "error" in result:
            result["error"] += "; stderr: " + stderr.decode("utf-8", "replace").strip()[-500:]
    if reply.get("error"):
        result["error"] = reply["error"]
    probes = {name: bool(value) for name, value in (reply.get("probes") or {}).items()}
    confirmed = set(reply.get("layers") or ())
    if (
        "namespaces" in launch.layers
        and probes.get("host_processes_hidden")
        and probes.get("project_hidden")
        and probes.get("network_blocked")
    ):
        confirmed.add("namespaces")
    result["layers"] = list(_ordered(confirmed))
    result["probes"] = probes
    return result
