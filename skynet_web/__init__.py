"""The project: settings, URLs, the Celery app, sign-up and log-in, /healthz, the language
middleware and `manage.py serve`. The top layer: it may import every app below it, and
none of them imports it (see pyproject's import contracts).
"""

from __future__ import annotations

from skynet_web.celery import app as celery_app

__all__ = ["celery_app"]
