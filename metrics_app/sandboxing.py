"""The sandbox configuration of this process, from settings and the worker's slot."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings

from contract import sandbox

logger = logging.getLogger(__name__)

_slot: int | None = None
_self_test: dict | None = None


def base_config() -> sandbox.SandboxConfig:
    changes: dict = {"memory_mb": settings.SANDBOX_MEMORY_MB}
    if settings.SANDBOX_PYTHON:
        changes["python"] = settings.SANDBOX_PYTHON
    return dataclasses.replace(sandbox.SandboxConfig(), **changes)


def config() -> sandbox.SandboxConfig:
    """The config for checks run by this process.

    Under bubblewrap every sandbox has its own user namespace, so one shared uid is safe.
    Without it, two concurrent checks under one uid would share RLIMIT_NPROC (a fork bomb
    in one would starve the other), so each worker process gets a uid of its own.
    """
    base = base_config()
    if _slot is None or "namespaces" in sandbox.active_layers(base):
        return base
    return sandbox.SandboxConfig.for_slot(_slot, python=base.python, memory_mb=base.memory_mb)


def set_slot(slot: int) -> None:
    global _slot
    _slot = slot


def run_self_test() -> dict:
    """Probe the walls once at worker start and remember which layers hold."""
    global _self_test
    try:
        _self_test = sandbox.self_test(config())
    except Exception as exc:  # a broken self-test must not stop the worker; it is reported
        logger.exception("sandbox self-test failed")
        _self_test = {"layers": [], "probes": {}, "mode": None, "error": type(exc).__name__}
    missing = set(sandbox.LAYERS) - set(_self_test.get("layers", []))
    if missing:
        logger.warning(
            "SANDBOX DEGRADED: these layers do not hold on this worker: %s",
            ", ".join(sorted(missing)),
        )
    else:
        logger.info("sandbox self-test: all layers hold (%s)", ", ".join(_self_test["layers"]))
    return _self_test


def self_test_result() -> dict | None:
    return _self_test
