"""The sandbox configuration of this process, from settings and the worker's slot."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings

import sandbox
from contract.runner import OnDemand, Roles, SandboxSource
from contract.warm import WarmPool
from sandbox import site

logger = logging.getLogger(__name__)

_slot: int | None = None
_self_test: dict | None = None
_pool: WarmPool | None = None
# Warm sandboxes kept ready per worker process: a check takes one, an artifact check two,
# and one is left for the next check while the pool refills.
POOL_SIZE = 3


def base_config() -> sandbox.SandboxConfig:
    changes: dict = {
        "memory_mb": settings.SANDBOX_MEMORY_MB,
        "mode": settings.SANDBOX_MODE,
        "uid": settings.SANDBOX_UID,
        "gid": settings.SANDBOX_UID,
    }
    if settings.SANDBOX_PYTHON:
        changes["python"] = settings.SANDBOX_PYTHON
    if settings.SANDBOX_BWRAP:
        changes["bwrap"] = settings.SANDBOX_BWRAP
    if settings.SANDBOX_CGROUP:
        changes["cgroup"] = settings.SANDBOX_CGROUP
    config = dataclasses.replace(sandbox.SandboxConfig(), **changes)
    # The libraries a metric may import and dspy, staged once per machine and found at
    # each worker start (sandbox.site): every sandbox of this process binds them,
    # so checks, evaluations and runs, metrics and programs alike, can import them.
    staged = site.site_packages(sandbox.stage_gid(config))
    return dataclasses.replace(config, site_packages=staged) if staged else config


def config() -> sandbox.SandboxConfig:
    """The config for checks run by this process.

    Under bubblewrap every sandbox has its own user namespace, so one shared uid is safe.
    Unconfined, two concurrent checks under one uid would share RLIMIT_NPROC (a fork bomb
    in one would starve the other), so each worker process gets a uid of its own: the
    ones after SKYNET_SANDBOX_UID.
    """
    base = base_config()
    if _slot is None or base.mode == "bwrap":
        return base
    return base.for_slot(_slot)


def start_pool() -> None:
    """Keep warm sandboxes ready in this (worker pool) process, started in the background."""
    global _pool
    if _pool is None:
        _pool = WarmPool(config, POOL_SIZE)
    _pool.fill()


def stop_pool() -> None:
    global _pool
    if _pool is not None:
        _pool.close()
        _pool = None


def sandboxes(artifact_kind: str | None = None) -> SandboxSource:
    """Where this process's checks get their sandboxes: the warm pool of a worker, or one
    started on demand (a command, a test). A DSPy program's run gets one of its own, with
    dspy loaded (dspy_sandboxes)."""
    common = _pool if _pool is not None else OnDemand(config())
    if artifact_kind == "dspy":
        return Roles(common, dspy_sandboxes())
    return common


def dspy_config() -> sandbox.SandboxConfig:
    """As config(), with the memory a DSPy program's run needs (dspy alone takes ~100 MB,
    and without a cgroup each process gets a share of the limit)."""
    return dataclasses.replace(config(), memory_mb=settings.DSPY_SANDBOX_MEMORY_MB)


def dspy_sandboxes() -> SandboxSource:
    """Sandboxes for DSPy programs: each started when asked for, dspy imported before it
    forks a case."""
    return OnDemand(dspy_config(), preload="dspy")


def set_slot(slot: int) -> None:
    global _slot
    _slot = slot


def run_self_test() -> dict:
    """Probe the walls once at worker start and remember what holds, or why nothing can run.

    A worker whose sandbox is unavailable keeps running: it ends every check it takes with
    the reason (fail closed), and /healthz reports it, rather than leaving checks queued.
    """
    global _self_test
    try:
        _self_test = sandbox.self_test(config())
    except Exception as exc:  # a broken self-test must not stop the worker; it is reported
        logger.exception("sandbox self-test failed")
        _self_test = {
            "available": False,
            "reason": "bwrap_failed",
            "detail": f"self-test: {type(exc).__name__}",
            "layers": [],
            "probes": {},
            "mode": None,
        }
    if not _self_test.get("available", True):
        logger.error(
            "SANDBOX UNAVAILABLE on this worker (%s: %s): every check will fail with this "
            "reason until it is fixed; see README, 'When things go wrong'.",
            _self_test.get("reason"),
            _self_test.get("detail"),
        )
        return _self_test
    expected = set(_self_test.get("expected_layers") or sandbox.LAYERS)
    missing = expected - set(_self_test.get("layers", []))
    if missing or _self_test.get("error"):
        logger.error(
            "sandbox self-test: these layers did not confirm from inside: %s (%s)",
            ", ".join(sorted(missing)) or "-",
            _self_test.get("error", ""),
        )
    else:
        logger.info("sandbox self-test: all layers hold (%s)", ", ".join(_self_test["layers"]))
    return _self_test


def self_test_result() -> dict | None:
    return _self_test
