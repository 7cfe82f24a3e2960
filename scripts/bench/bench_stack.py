"""The private stack the benchmarks run against: an embedded Redis on a unix socket, a fresh
SQLite database, Celery workers and (optionally) gunicorn, under a temp dir, started and
stopped through the project's one Supervisor (skynet_web.processes)."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from skynet_web.processes import Supervisor  # noqa: E402 - needs the project root on sys.path


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """Redis, a fresh SQLite database, Celery workers and (optionally) gunicorn, all private.

    Use as a context manager; stop() is idempotent and ignores Ctrl+C while it runs.
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        gunicorn_workers: int = 0,
        extra_env: dict[str, str] | None = None,
        keep: bool = False,
        log=print,
    ) -> None:
        self.workers = workers
        self.gunicorn_workers = gunicorn_workers
        self.extra_env = extra_env or {}
        self.keep = keep
        self.log = log
        self.tmp: Path | None = None
        self.redis_process: subprocess.Popen | None = None
        self.redis_socket: Path | None = None
        self.children = Supervisor(cwd=ROOT)
        self.port: int | None = None
        self.env: dict[str, str] = {}
        self._stopped = False

    # Everything below is started in order; stop() undoes whatever part of it happened.
    def start(self) -> Stack:
        self.tmp = Path(tempfile.mkdtemp(prefix="skynet-bench-", dir="/tmp"))
        self.redis_socket = self.tmp / "redis.sock"
        database = self.tmp / "db.sqlite3"
        env = {
            "DJANGO_SETTINGS_MODULE": "skynet_web.settings",
            "DATABASE_URL": f"sqlite:///{database}",
            "REDIS_URL": f"redis+socket://{self.redis_socket}",
            "DJANGO_DEBUG": "0",
            # testserver: the in-process test Client's host name.
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            # A key of this run's own, so nothing is read from or written to var/.
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_LOG_LEVEL": "INFO",
            **self.extra_env,
        }
        # This process also runs Django (users, enqueueing, the test Client, DB queries).
        os.environ.update(env)
        self.env = {**os.environ, **env}

        from skynet_web import embedded_redis
        from skynet_web.processes import celery_worker_argv

        self.redis_process = embedded_redis.start(self.redis_socket)

        import django

        django.setup()
        # The site's logging config puts the root logger at INFO: keep httpx's per-request
        # lines (this script is the client) out of the output.
        for name in ("httpx", "httpcore", "axes"):
            logging.getLogger(name).setLevel(logging.WARNING)
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)

        for index in range(1, self.workers + 1):
            self._spawn(
                f"worker{index}",
                celery_worker_argv(name=f"w{index}@%h", quiet=True),
            )
        if self.gunicorn_workers:
            self.port = free_port()
            gunicorn = Path(sys.executable).parent / "gunicorn"
            self._spawn(
                "gunicorn",
                [
                    str(gunicorn),
                    "skynet_web.wsgi",
                    "--workers",
                    str(self.gunicorn_workers),
                    # Threads, as in the README's recipe: a live panel's request waits on
                    # the server for its check, and must not hold a whole worker.
                    "--worker-class",
                    "gthread",
                    "--threads",
                    "8",
                    # Longer than a client idles between two requests, so a kept-alive
                    # connection is never closed under a request being sent on it.
                    "--keep-alive",
                    "30",
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    # Not the shared default (~/.gunicorn/gunicorn.ctl) another site may use.
                    "--control-socket",
                    str(self.tmp / "gunicorn.ctl"),
                ],
            )
        self._wait_for_workers()
        if self.gunicorn_workers:
            self._wait_for_gunicorn()
        return self

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        return self.children.start(name, argv, log=self.tmp / f"{name}.log", env=self.env)

    def processes(self) -> list[tuple[str, subprocess.Popen]]:
        return [(child.name, child.process) for child in self.children.children]

    @property
    def log_files(self) -> dict[str, Path]:
        return {child.name: child.log for child in self.children.children if child.log}

    def _check_alive(self) -> None:
        self.children.raise_if_exited()

    def _wait_for_workers(self, timeout_s: float = 90) -> None:
        from skynet_web.celery import app

        wanted = {f"w{i}@{socket.gethostname()}" for i in range(1, self.workers + 1)}
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            replies = app.control.ping(timeout=0.5) or []
            if wanted <= {name for reply in replies for name in reply}:
                return
        raise RuntimeError(f"the Celery workers did not answer within {timeout_s:.0f} s")

    def _wait_for_gunicorn(self, timeout_s: float = 60) -> None:
        import httpx

        deadline = time.monotonic() + timeout_s
        with httpx.Client(base_url=self.base_url, trust_env=False, timeout=5) as client:
            while time.monotonic() < deadline:
                self._check_alive()
                try:
                    if client.get("/en/accounts/login/").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout_s:.0f} s")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def sandbox_status(self) -> dict:
        """Each worker's self-test result: which sandbox layers hold, and the mode."""
        from skynet_web.celery import app

        replies = app.control.broadcast("sandbox_status", reply=True, timeout=2) or []
        return {
            name: {"mode": status.get("mode"), "layers": status.get("layers", [])}
            for reply in replies
            for name, status in reply.items()
        }

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl+C waits
        try:
            with contextlib.suppress(Exception):
                from django.db import connections

                connections.close_all()
            # Web first, then workers (a warm shutdown finishes the task in hand), Redis last.
            self.children.stop(grace_s=20, say=self.log)
            if self.redis_process is not None:
                from skynet_web import embedded_redis

                embedded_redis.stop(self.redis_process, self.redis_socket)
            if self.tmp is not None:
                if self.keep:
                    self.log(f"kept {self.tmp} (database and logs)")
                else:
                    shutil.rmtree(self.tmp, ignore_errors=True)
        finally:
            signal.signal(signal.SIGINT, previous)

    def __enter__(self) -> Stack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def sigterm_as_interrupt() -> None:
    """SIGTERM runs the same finally blocks as Ctrl+C."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
