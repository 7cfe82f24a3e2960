"""The runner's API for starting a child: `prepare()` and `limits_for()`.

`prepare()` stages the runtime folder (sandbox.stage), makes the launch's cgroup,
and returns the exact command line and environment in a Launch;
the runner starts the child itself (`launch.popen()`) and always ends it with kill().
`launch.limits` is what the runner sends the child as job["limits"].
"""

from __future__ import annotations

import base64
import logging
import math
import os

from sandbox import seccomp
from sandbox.bwrap import ALONE_FLAGS, SETUP_CAPS, _bwrap_prefix, _bwrap_tail, exec_folders
from sandbox.cgroups import CaseGroup
from sandbox.config import (
    _SANDBOX_ENV,
    CHILD_LAYERS,
    FALLBACK_PROCESSES,
    RUNTIME_MOUNT,
    SITE_MOUNT,
    TMP_MOUNT,
    Launch,
    SandboxConfig,
    _exclusive_uid,
    _host_uid,
    sandbox_env,
)
from sandbox.detect import _plan, launch_bwrap, stage_gid
from sandbox.libraries import PRELOAD
from sandbox.processes import reap_leftovers
from sandbox.stage import stage

log = logging.getLogger("sandbox")

_PYTHON_FLAGS = ("-E", "-s", "-B")
# RLIMIT_NPROC counts per user namespace, which a zygote's check sandboxes share: each gets
# room for its own processes (held by its cgroup's pids.max) plus what the others may hold
# (an artifact check's second sandbox, the idle ones, the zygote's own).
ZYGOTE_PROCESS_HEADROOM = 128


def limits_for(
    timeout_s: float,
    config: SandboxConfig | None = None,
    *,
    grouped: bool | None = None,
    zygote: bool = False,
) -> dict:
    """The dict the runner sends as job["limits"]; the child passes it to _confine.apply().

    Shape (all JSON-serialisable)::

        {
          "version": 2,
          "memory_mb": 512,            # RLIMIT_AS of each process, MiB
          "cpu_seconds": ceil(T) + 1,  # RLIMIT_CPU soft (hard = soft + 1 -> SIGKILL)
          "file_size_bytes": 1048576,  # RLIMIT_FSIZE (writes past it raise OSError EFBIG)
          "open_files": 64,            # RLIMIT_NOFILE
          "max_processes": 64,         # RLIMIT_NPROC (per sandbox under bwrap, see package doc)
          "core_bytes": 0,             # RLIMIT_CORE
          "uid": 60600, "gid": 60600,  # drop to these if the child still is root, else None
          "seccomp": "load",           # "load" (the program below), or None
          "seccomp_bpf": "...",        # base64 of the filter, for "load"
          "noexec": ["/tmp"],          # bwrap only: the writable mounts, noexec
          "mount_noexec": True,        # the child makes them noexec itself, then drops
                                       # its capabilities (bwrap alone; not a zygote's)
          "exec_paths": [...],         # Landlock, where the kernel has it: execve only
                                       # beneath these
          "cases_apart": True,         # where Landlock scopes signals: each case forked
                                       # gets a domain of its own (skynet._apart)
          "subreaper": False,          # unconfined only: adopt orphans (PR_SET_CHILD_SUBREAPER)
          "env_keys": [...],           # the only environment variables the child may have
          "required": [...],           # layers apply() must set up, or raise (fail closed)
          "site": "/opt/skynet-site",  # with staged libraries only: where they are, and
          "preload": ["numpy", ...],   # what a warm sandbox imports before its cases
        }

    Every child loads the filter itself: a sandbox bwrap starts alone first remounts its
    /tmp noexec, which the filter would refuse. For a check sandbox forked by a zygote
    (`zygote`, always with a cgroup) the zygote made its noexec /tmp, and RLIMIT_NPROC gets
    ZYGOTE_PROCESS_HEADROOM more: the cgroup's pids.max is what bounds the check.

    The check's memory limit holds for all its processes together: with a cgroup
    (`grouped`, default: whether the config's plan has one) the group holds it and each
    process may use all of it; without, the processes are capped at FALLBACK_PROCESSES and
    each gets memory_mb / FALLBACK_PROCESSES.
    """
    cfg = config or SandboxConfig()
    plan = _plan(cfg)
    if grouped is None:
        grouped = plan.cgroup is not None
    grouped = grouped or zygote
    root = os.geteuid() == 0
    if grouped:
        memory_mb, processes = int(cfg.memory_mb), int(cfg.max_processes)
    else:
        processes = min(int(cfg.max_processes), FALLBACK_PROCESSES)
        memory_mb = max(1, int(cfg.memory_mb) // processes)
    limits = {
        "version": 2,
        "memory_mb": memory_mb,
        "cpu_seconds": math.ceil(timeout_s) + 1,
        "file_size_bytes": int(cfg.file_size_bytes),
        "open_files": int(cfg.open_files),
        "max_processes": processes + (ZYGOTE_PROCESS_HEADROOM if zygote else 0),
        "core_bytes": 0,
        "uid": cfg.uid if root else None,
        "gid": cfg.gid if root and cfg.uid is not None else None,
        "seccomp": "load" if cfg.seccomp else None,
        # Without a pid namespace the child adopts its orphans so kill() finds them.
        "subreaper": plan.mode == "unconfined",
        # bwrap adds PWD for its --chdir.
        "env_keys": sorted([*_SANDBOX_ENV, "PWD"]),
        "required": [name for name in plan.layers if name in CHILD_LAYERS],
    }
    if plan.mode == "bwrap":
        limits["noexec"] = [TMP_MOUNT]
        limits["mount_noexec"] = not zygote
    if "landlock" in plan.layers:
        limits["exec_paths"] = exec_folders(cfg)
    if "cases_apart" in plan.layers:
        limits["cases_apart"] = True
    if cfg.site_packages:
        # The staged libraries (sandbox.site), on every case's sys.path
        # (runtime/skynet_warm.py), and those a warm sandbox imports before its cases.
        limits["site"] = SITE_MOUNT if plan.mode == "bwrap" else cfg.site_packages
        limits["preload"] = list(PRELOAD)
    if cfg.seccomp:
        limits["seccomp_bpf"] = base64.b64encode(seccomp.bpf_program()).decode("ascii")
    return limits


def zygote_possible(config: SandboxConfig | None = None) -> bool:
    """Whether check sandboxes can come from a zygote: under bwrap, with a cgroup (which
    then bounds each check's processes; the shared user namespace's RLIMIT_NPROC cannot)."""
    plan = _plan(config or SandboxConfig())
    return plan.unavailable is None and plan.mode == "bwrap" and plan.cgroup is not None


def case_group(config: SandboxConfig | None = None) -> CaseGroup | None:
    """A new cgroup with the check's limits, or None where there is none to be had."""
    cfg = config or SandboxConfig()
    return _case_group(_plan(cfg), cfg)


def _without_cgroup(layers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(x for x in layers if x != "cgroup")


def _case_group(plan, cfg: SandboxConfig) -> CaseGroup | None:
    if plan.cgroup is None:
        return None
    try:
        return CaseGroup(plan.cgroup, int(cfg.memory_mb) << 20, int(cfg.max_processes))
    except OSError as exc:
        # The group could be made at start; if it cannot now, this launch gets the rlimit
        # split instead (launch.limits says so), never no limit.
        log.warning("sandbox: no cgroup for this launch (%s); rlimits bound it", exc)
        return None


def prepare(
    runtime_dir: str,
    script: str,
    args: list[str],
    *,
    timeout_s: float,
    config: SandboxConfig | None = None,
    zygote: bool = False,
) -> Launch:
    """Return how to start `runtime_dir/script args...` confined.

    `script` is a path relative to runtime_dir; the child sees the staged runtime folder on
    sys.path (as the script's folder). File descriptors passed to `launch.popen(pass_fds=)`
    keep their number inside the sandbox. `timeout_s` is the runner's wall clock, which the
    runner enforces itself (with kill()); the CPU limit derived from it is in
    `launch.limits`. Raises SandboxUnavailable when the sandbox cannot be had here.

    Under bwrap the child is started holding SETUP_CAPS inside bwrap's user namespace:
    alone, as its pid 1 (ALONE_FLAGS), for its noexec /tmp, dropped before anything else
    runs (skynet._confine.apply); with `zygote` (bwrap mode only: see zygote_possible())
    the launch is of a zygote, which runs no user code and keeps them, gets no syscall
    filter and no cgroup; each check sandbox it forks gets both.
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    cfg = config or SandboxConfig()
    plan = _plan(cfg)
    if plan.unavailable is not None:
        raise plan.unavailable
    if zygote and not zygote_possible(cfg):
        raise ValueError("a zygote needs the bwrap mode and a cgroup")
    staged = stage(
        runtime_dir,
        bwrap=plan.bwrap_source if plan.wheel else None,
        gid=stage_gid(cfg),
        python=cfg.python,
    )
    env = sandbox_env()
    exclusive = _exclusive_uid(cfg)
    group = None if zygote else _case_group(plan, cfg)
    layers = plan.layers if group is not None or zygote else _without_cgroup(plan.layers)
    common = dict(layers=layers, uid=_host_uid(cfg), uid_exclusive=exclusive, group=group)
    limits = limits_for(timeout_s, cfg, grouped=group is not None)
    if plan.mode == "bwrap":
        bwrap = launch_bwrap(plan, cfg, runtime_dir)
        argv = [
            *plan.privdrop,
            *_bwrap_prefix(cfg, bwrap),
            *(SETUP_CAPS if zygote else ALONE_FLAGS),
            "--ro-bind",
            staged.runtime,
            RUNTIME_MOUNT,
            *(("--ro-bind", cfg.site_packages, SITE_MOUNT) if cfg.site_packages else ()),
            *_bwrap_tail(cfg, bwrap, None),
            "--",
            cfg.python,
            *_PYTHON_FLAGS,
            f"{RUNTIME_MOUNT}/{script}",
            *args,
        ]
        fds = ()
    else:
        if exclusive:
            # Without a pid namespace or cgroup a worker killed hard can leave grandchildren
            # behind; the slot's next launch clears them (its uid is this slot's alone).
            reap_leftovers(cfg)
        script_path = os.path.join(staged.runtime, script)
        argv = [*plan.privdrop, cfg.python, *_PYTHON_FLAGS, script_path, *args]
        fds = ()
    if group is not None:
        argv = group.join_argv(argv)
    return Launch(argv=argv, env=env, mode=plan.mode, pass_fds=fds, limits=limits, **common)
