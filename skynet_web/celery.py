"""The Celery app. Start a worker with `celery -A skynet_web worker`.

Only a worker wires up the worker's signals (jobs.worker: the sandbox self-test,
the warm pools, the sweeper, the database connections around tasks): a web process that
imports the app, or the tasks to look them up, gets none of them.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skynet_web.settings")

app = Celery("skynet_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _wire_the_worker(**kwargs) -> None:
    from jobs import worker

    worker.start()
