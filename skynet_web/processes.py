"""How this project starts and stops its processes, in one place for the run command, the
benchmarks and the tests: a Celery worker's command line, and a Supervisor that keeps a
set of child processes and stops them all."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PR_SET_PDEATHSIG = 1


# The queues (settings.CELERY_TASK_ROUTES): checks and reviews; the evaluations, which
# run for minutes or hours; and the optimization runs, which run for hours. The last two
# get workers of their own, never holding up a check.
CHECK_QUEUE = "celery"
EVALUATION_QUEUE = "evaluations"
RUN_QUEUE = "runs"


def celery_worker_argv(
    *,
    concurrency: int = 1,
    name: str | None = None,
    quiet: bool = False,
    queues: tuple[str, ...] = (CHECK_QUEUE, EVALUATION_QUEUE, RUN_QUEUE),
) -> list[str]:
    """The command line of a worker of this project's Celery app, taking tasks from
    `queues` (by default every queue: one worker for a test or a benchmark).

    quiet drops gossip and mingle, which only matter between long-lived workers and slow
    down a worker started for one test or one benchmark.
    """
    argv = [sys.executable, "-m", "celery", "-A", "skynet_web", "worker"]
    argv += ["--loglevel", "INFO", "--concurrency", str(concurrency), "-Q", ",".join(queues)]
    if name:
        argv += ["-n", name]
    if quiet:
        argv += ["--without-gossip", "--without-mingle"]
    return argv


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the supervising process dies, even by
    SIGKILL, so that no worker outlives the command that started it. (The kernel sends it
    when the starting *thread* ends: start children from the main thread.)"""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Child:
    name: str
    process: subprocess.Popen
    log: Path | None

    @property
    def pid(self) -> int:
        return self.process.pid

    def tail(self, lines: int = 20) -> str:
        """The last lines of its log ("" without one)."""
        if self.log is None:
            return ""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Supervisor:
    """Child processes that start and stop together.

    Each runs in its own process group (a Ctrl+C reaches the supervising process, which
    stops them in order) and gets SIGTERM if the supervising process dies. stop() sends
    SIGTERM to each child, newest first (the web before the workers; a Celery worker then
    shuts down warm, finishing the task in hand), waits up to `grace_s` for each, then
    kills whatever is left of its process group (a pool child, a sandbox).
    """

    def __init__(self, *, cwd: str | Path | None = None, env: dict[str, str] | None = None):
        self.cwd = cwd
        self.env = env
        self.children: list[Child] = []

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        log: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen:
        """Start `argv`; its output goes to `log` (this process's own without one)."""
        out = open(log, "wb") if log is not None else None
        try:
            process = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=env if env is not None else self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT if out is not None else None,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        finally:
            if out is not None:
                out.close()
        self.children.append(Child(name, process, log))
        return process

    def exited(self) -> list[Child]:
        """The children that are no longer running."""
        return [child for child in self.children if child.process.poll() is not None]

    def raise_if_exited(self) -> None:
        for child in self.exited():
            status = child.process.returncode
            raise RuntimeError(f"{child.name} exited with status {status}:\n{child.tail(30)}")

    def stop(self, grace_s: float = 20.0, *, say=None) -> None:
        """Stop every child; idempotent."""
        running = [child for child in reversed(self.children) if child.process.poll() is None]
        for child in running:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGTERM)
        for child in reversed(self.children):
            deadline = time.monotonic() + grace_s
            try:
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                if say is not None:
                    say(f"{child.name} did not stop in {grace_s:.0f} s; killing it")
            # Whatever is left in its process group, the child itself included.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            child.process.wait()
