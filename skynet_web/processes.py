"""How this project starts a Celery worker, in one place for the run command, the
benchmarks and the tests."""

from __future__ import annotations

import sys


def celery_worker_argv(
    *, concurrency: int = 1, name: str | None = None, quiet: bool = False
) -> list[str]:
    """The command line of a worker of this project's Celery app.

    quiet drops gossip and mingle, which only matter between long-lived workers and slow
    down a worker started for one test or one benchmark.
    """
    argv = [sys.executable, "-m", "celery", "-A", "skynet_web", "worker"]
    argv += ["--loglevel", "INFO", "--concurrency", str(concurrency)]
    if name:
        argv += ["-n", name]
    if quiet:
        argv += ["--without-gossip", "--without-mingle"]
    return argv
