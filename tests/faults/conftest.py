"""Real processes for the fault tests: a private Redis, and workers started on it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from skynet_web import embedded_redis
from skynet_web.processes import Supervisor, celery_worker_argv
from tests.conftest import ROOT, _database_url, wait_for

# Fast clocks for the sweeps, so the tests take seconds, not minutes.
FAST = {
    "SKYNET_HEARTBEAT_S": "1",
    "SKYNET_STALE_AFTER_S": "4",
    "SKYNET_REQUEUE_AFTER_S": "2",
    "SKYNET_SWEEP_EVERY_S": "1",
}


@pytest.fixture
def private_redis(tmp_path):
    socket_path = Path("/tmp") / f"skynet-fault-{os.getpid()}.sock"
    state = {"process": embedded_redis.start(socket_path), "socket": socket_path}

    def restart() -> None:
        embedded_redis.stop(state["process"], socket_path)
        state["process"] = embedded_redis.start(socket_path)

    state["restart"] = restart
    state["url"] = f"redis+socket://{socket_path}"
    yield state
    embedded_redis.stop(state["process"], socket_path)


def _ping(app) -> list:
    # A fresh connection each time: the pooled one may point at a Redis that restarted.
    with app.connection_for_write() as conn:
        return app.control.ping(timeout=0.5, connection=conn)


@pytest.fixture
def workers(private_redis, tmp_path, broker, monkeypatch):
    """start(name, extra_env, concurrency) -> a Celery worker process on the private
    Redis, in its own process group, with these variables added to its environment."""
    from django.db import connection

    monkeypatch.setattr(broker.conf, "broker_url", private_redis["url"])
    # Publish through new pools on the private Redis, not ones an earlier test opened.
    monkeypatch.setattr(broker, "_pool", None)
    monkeypatch.setattr(broker.amqp, "_producer_pool", None)
    children = Supervisor(cwd=ROOT)
    env = {
        **os.environ,
        **FAST,
        "REDIS_URL": private_redis["url"],
        "DATABASE_URL": _database_url(connection.settings_dict),
    }

    def start(name: str, extra_env: dict | None = None, concurrency: int = 1) -> subprocess.Popen:
        process = children.start(
            name,
            celery_worker_argv(
                name=f"{name}-{os.getpid()}@%h", quiet=True, concurrency=concurrency
            ),
            log=tmp_path / f"{name}.log",
            env={**env, **(extra_env or {})},
        )
        wait_for(lambda: f"{name}-{os.getpid()}@" in str(_ping(broker)), 60)
        return process

    yield start
    children.stop()
