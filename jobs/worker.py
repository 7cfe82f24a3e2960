"""Worker start-up: the sandbox self-test, orphan reaping, and a status command for /healthz.

Imported by the Celery app only when a worker starts (skynet_web.celery), which connects
the signal handlers below; nothing else imports it.
"""

from __future__ import annotations

import logging
import threading

from celery.signals import (
    task_postrun,
    task_prerun,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)
from celery.worker.control import inspect_command
from django.conf import settings
from django.db import close_old_connections, connection

import sandbox
from jobs import sandbox_pool, sweeps

logger = logging.getLogger(__name__)


def start() -> None:
    """At worker start (skynet_web.celery), once this module's handlers are connected."""
    sandbox_pool.run_self_test()


@worker_process_init.connect
def _prepare_pool_process(**kwargs) -> None:
    # bubblewrap leaves its namespace init for someone to reap, and a killed unconfined
    # sandbox orphans its processes: as subreaper this process gets and reaps them.
    sandbox.adopt_orphans()
    from billiard.process import current_process

    index = getattr(current_process(), "index", None)
    sandbox_pool.set_slot(index if isinstance(index, int) else 0)
    # Sandboxes warm and waiting before the first check arrives.
    sandbox_pool.start_pool()


@worker_process_shutdown.connect
def _stop_pool(**kwargs) -> None:
    sandbox_pool.stop_pool()


@task_prerun.connect
@task_postrun.connect
def _tidy_connections(**kwargs) -> None:
    # What Django does around each request: close a connection that failed or outlived
    # CONN_MAX_AGE, keep a good one (settings.CELERY_DB_REUSE_MAX stops Celery from
    # closing every connection around every task, a new one per check otherwise).
    close_old_connections()


@inspect_command()
def sandbox_status(state) -> dict:
    """What the self-test at start found; answering at all proves the worker is alive."""
    return sandbox_pool.self_test_result() or {"layers": [], "probes": {}, "mode": None}


def _sweep_forever() -> None:
    while True:
        try:
            sweeps.sweep_once()
        except Exception:  # the database or broker may be down for a while; try again
            logger.exception("check sweep failed")
        finally:
            connection.close()
        threading.Event().wait(settings.SWEEP_EVERY_S)


@worker_ready.connect
def _start_sweeper(**kwargs) -> None:
    """Every worker sweeps: any one that survives ends checks lost with another worker
    and re-sends checks whose message a Redis restart lost."""
    threading.Thread(target=_sweep_forever, name="check-sweeper", daemon=True).start()
