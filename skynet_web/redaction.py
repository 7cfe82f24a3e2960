"""Secrets taken out of every log line the project writes: an API token (`skn_...`)
wherever it appears, and the value of any `token=`, `access_token=` or `api_key=` in a
query string. A token sent where it does not belong (`?token=...`) is refused, and the
access log that records the refused request must not keep it either.

Used as a logging filter on every handler settings.LOGGING configures, the dev server's
access log (`django.server`) among them, and by gunicorn's access log in the production
recipe (deploy/gunicorn.conf.py).
"""

from __future__ import annotations

import logging
import re

MASK = "[redacted]"
_TOKEN = re.compile(r"skn_[A-Za-z0-9_\-]+")
_QUERY = re.compile(r"(?i)\b((?:access_)?token|api_key|apikey)=([^&\s\"']+)")


def redact(text: str) -> str:
    text = _TOKEN.sub("skn_" + MASK, text)
    return _QUERY.sub(lambda found: f"{found.group(1)}={MASK}", text)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message with its secrets masked; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
