"""The runner's API for starting a child: `limits_for()` and `prepare()`.

`prepare()` returns the exact command line and environment; the runner starts the child
itself. The runtime folder is byte-compiled once per process and bound entry by entry.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import sys

from contract.sandbox.bwrap import _bwrap_prefix, _bwrap_tail
from contract.sandbox.config import (
    _SANDBOX_ENV,
    CHILD_LAYERS,
    RUNTIME_MOUNT,
    Launch,
    SandboxConfig,
    _exclusive_uid,
    _host_uid,
    _switches_uid,
    _uid_unprivileged,
    _world_can_reach,
    _world_can_read,
    sandbox_env,
)
from contract.sandbox.detect import _plan, _pyseccomp_for
from contract.sandbox.processes import reap_leftovers

_PYTHON_FLAGS = ("-E", "-s", "-B")


def limits_for(timeout_s: float, config: SandboxConfig | None = None) -> dict:
    """The dict the runner sends as job["limits"]; the child passes it to _confine.apply().

    Shape (all JSON-serialisable)::

        {
          "version": 1,
          "memory_mb": 512,            # RLIMIT_AS, MiB
          "cpu_seconds": ceil(T) + 1,  # RLIMIT_CPU soft (hard = soft + 1 -> SIGKILL)
          "file_size_bytes": 1048576,  # RLIMIT_FSIZE (writes past it raise OSError EFBIG)
          "open_files": 64,            # RLIMIT_NOFILE
          "max_processes": 64,         # RLIMIT_NPROC (per sandbox under bwrap, see package doc)
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
