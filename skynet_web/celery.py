"""The Celery app. Start a worker with `celery -A skynet_web worker`."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skynet_web.settings")

app = Celery("skynet_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
