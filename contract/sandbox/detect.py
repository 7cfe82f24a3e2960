"""Which layers a launch gets: bwrap, setpriv and pyseccomp detection, cached per config.

One probe run per process and config (`_plan()`); `active_layers()` reads the cached plan.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass

from contract.sandbox.bwrap import _OPTIONAL_FLAGS, _bwrap_options, _bwrap_prefix, _bwrap_tail
from contract.sandbox.config import (
    LAYERS,
    SandboxConfig,
    _host_uid,
    _switches_uid,
    _uid_unprivileged,
    _world_can_read,
    _world_can_run,
    sandbox_env,
)
from contract.sandbox.processes import _reap_adopted

log = logging.getLogger("contract.sandbox")

# Used when setpriv is missing: switch uid without preexec_fn, then exec the real command.
_DROP_PRIVILEGES_SRC = (
    "import os,sys;u,g=int(sys.argv[1]),int(sys.argv[2]);os.setgroups([]);"
    "os.setresgid(g,g,g);os.setresuid(u,u,u);os.execv(sys.argv[3],sys.argv[3:])"
)


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
