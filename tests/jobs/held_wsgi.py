"""The site as gunicorn serves it in production, except that a check panel's request
waits until its row changes however long that takes: the test that serves it decides
when each wait ends, never a clock."""

from __future__ import annotations

import importlib

from skynet_web.wsgi import application  # sets Django up: the views import after it

importlib.import_module("checks.views").LONG_POLL_S = 600.0

__all__ = ["application"]
