"""Run the whole site on one machine: Redis (embedded unless REDIS_URL is set), the
Celery worker and the web server, after migrating and making the demo account.

Ctrl+C stops all of it.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from skynet_web import embedded_redis
from skynet_web.private_files import PRIVATE_FILE_MODE, private_dir
from skynet_web.processes import (
    CHECK_QUEUE,
    EVALUATION_QUEUE,
    RUN_QUEUE,
    Supervisor,
    celery_worker_argv,
)

DEMO_USERNAME = "demo"


def ensure_demo_account(login_file) -> tuple[str, str | None]:
    """Create the demo account once. Its password is kept in var/ for this machine only."""
    User = get_user_model()
    if User.objects.filter(username=DEMO_USERNAME).exists():
        password = login_file.read_text().strip() if login_file.exists() else None
        return DEMO_USERNAME, password
    password = secrets.token_urlsafe(9)
    User.objects.create_user(username=DEMO_USERNAME, password=password)
    private_dir(login_file.parent)
    # Created private, not chmodded after writing: the password is never world-readable.
    fd = os.open(login_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")
    os.chmod(login_file, PRIVATE_FILE_MODE)  # a file left by an older version keeps its mode
    return DEMO_USERNAME, password


class Command(BaseCommand):
    help = "Run the web server, the Celery worker and (unless REDIS_URL is set) Redis."

    def _say_sandbox(self) -> None:
        """Say at once when checks cannot run here, and why, before anyone clicks Run."""
        import sandbox
        from jobs import sandbox_pool
        from wording import words

        config = sandbox_pool.base_config()
        missing = sandbox.availability(config)
        if missing is not None:
            message = words(missing.reason, {"detail": missing.detail}, family="sandbox")
            self.stdout.write(self.style.ERROR(message))
            self.stdout.write(self.style.ERROR("Contract checks will fail until this is fixed."))
        elif config.mode == "unconfined":
            self.stdout.write(
                self.style.WARNING(
                    "SKYNET_SANDBOX=unconfined: metrics run without namespaces and can read "
                    "this machine's files. Use it only on a machine you alone use."
                )
            )
        else:
            layers = ", ".join(sandbox.active_layers(config))
            self.stdout.write(f"Sandbox: {layers}")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--addr", default="127.0.0.1:8000", help="host:port for the site")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")

    def handle(self, *args, addr: str, concurrency: int, **options) -> None:
        private_dir(settings.VAR_DIR, tighten=True)
        env = dict(os.environ)
        redis_process = None
        if not os.environ.get("REDIS_URL"):
            socket_path = settings.EMBEDDED_REDIS_SOCKET
            redis_process = embedded_redis.start(socket_path)
            env["REDIS_URL"] = f"redis+socket://{socket_path}"
            self.stdout.write(f"Redis (embedded): {socket_path}")
        else:
            self.stdout.write("Redis: REDIS_URL")

        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        username, password = ensure_demo_account(settings.VAR_DIR / "demo-login.txt")

        children = Supervisor(env=env)
        children.start(
            "worker",
            celery_worker_argv(concurrency=concurrency, name="checks@%h", queues=(CHECK_QUEUE,)),
        )
        # Evaluations take their own worker: a long one never holds up a check.
        children.start(
            "evaluations",
            celery_worker_argv(name="evaluations@%h", queues=(EVALUATION_QUEUE,)),
        )
        # And the optimization runs theirs: a run takes hours.
        children.start("runs", celery_worker_argv(name="runs@%h", queues=(RUN_QUEUE,)))
        children.start("web", [sys.executable, "manage.py", "runserver", addr, "--noreload"])
        self.stdout.write("")
        self._say_sandbox()
        self.stdout.write(self.style.SUCCESS(f"The workbench is at http://{addr}/"))
        if password:
            self.stdout.write(f"Demo login: {username} / {password}")
        else:
            self.stdout.write(f"Demo login: {username} (password set on this machine earlier)")
        self.stdout.write("Press Ctrl+C to stop the site, the workers and Redis.")
        self.stdout.write("")

        stopping = False

        def stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and not children.exited():
                time.sleep(0.2)
        finally:
            exited = children.exited()
            children.stop(grace_s=15)
            if redis_process is not None:
                embedded_redis.stop(redis_process, settings.EMBEDDED_REDIS_SOCKET)
            self.stdout.write("Stopped.")
        if exited and not stopping:
            names = ", ".join(child.name for child in exited)
            self.stderr.write(f"Stopped everything: {names} exited on its own.")
            sys.exit(1)
