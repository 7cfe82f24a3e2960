"""The sandbox configuration a worker process runs its checks with (jobs.sandbox_pool)."""

from __future__ import annotations

import sandbox
from jobs import sandbox_pool


def test_sandboxes_run_as_the_configured_uid_not_nobody(settings):
    assert settings.SANDBOX_UID == sandbox.DEFAULT_UID != 65534
    config = sandbox_pool.base_config()
    assert (config.uid, config.gid) == (settings.SANDBOX_UID, settings.SANDBOX_UID)


def test_unconfined_each_worker_process_runs_as_the_uid_after_them(settings, monkeypatch):
    """Its own uid per worker process (RLIMIT_NPROC is per uid without namespaces), in the
    same group, the one the staged libraries are shared with."""
    settings.SANDBOX_MODE = "unconfined"
    monkeypatch.setattr(sandbox_pool, "_slot", 2)
    config = sandbox_pool.config()
    assert (config.uid, config.gid) == (settings.SANDBOX_UID + 3, settings.SANDBOX_UID)
    assert config.uid_exclusive
