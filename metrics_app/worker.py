"""Worker start-up: the sandbox self-test, orphan reaping, and a status command for /healthz."""

from __future__ import annotations

from celery.signals import worker_init, worker_process_init
from celery.worker.control import inspect_command

from contract import sandbox
from metrics_app import sandboxing


@worker_init.connect
def _self_test_at_start(**kwargs) -> None:
    sandboxing.run_self_test()


@worker_process_init.connect
def _prepare_pool_process(**kwargs) -> None:
    # bubblewrap leaves its namespace init for someone to reap, and a killed fallback
    # sandbox orphans its processes: as subreaper this process gets and reaps them.
    sandbox.adopt_orphans()
    from billiard.process import current_process

    index = getattr(current_process(), "index", None)
    sandboxing.set_slot(index if isinstance(index, int) else 0)


@inspect_command()
def sandbox_status(state) -> dict:
    """What the self-test at start found; answering at all proves the worker is alive."""
    return sandboxing.self_test_result() or {"layers": [], "probes": {}, "mode": None}
