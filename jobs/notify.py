"""Say at once that a job's row changed, so a waiting page need not poll for it.

The worker publishes the row's id on a Redis channel of its kind (a check, an evaluation,
a run) after each write of its row; the live panel's request (checks.views.check_detail
with ?since=, and its kin for evaluations and runs) subscribes, reads the row, and waits
for the next message if nothing changed yet. The row stays the truth:
a message only says "read it again", and with Redis unreachable the wait falls back to
reading the row every POLL_S.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

POLL_S = 0.25
# The kinds of rows whose changes are announced here besides checks.
EVALUATION = "evaluation"
_client: redis.Redis | None = None
_client_lock = threading.Lock()


def _redis() -> redis.Redis:
    global _client
    with _client_lock:
        if _client is None:
            _client = redis.Redis.from_url(
                settings.REDIS_PY_URL, socket_connect_timeout=2, socket_timeout=5
            )
        return _client


def channel(check_id: int, kind: str = "check") -> str:
    return f"skynet:{kind}:{check_id}"


def check_changed(check_id: int, kind: str = "check") -> None:
    """Tell any waiting page that the row changed (never raises). `kind` names the rows
    of another app that use the same channels ("run", EVALUATION)."""
    try:
        _redis().publish(channel(check_id, kind), b"1")
    except (redis.RedisError, OSError):
        logger.warning("could not publish the change of %s %s", kind, check_id, exc_info=True)


class Waiter:
    """Subscribe before reading the row, so a change between the read and the wait is
    not missed: `with Waiter(id) as waiter: read...; waiter.wait(seconds)`."""

    def __init__(self, check_id: int, kind: str = "check") -> None:
        self.check_id = check_id
        self.kind = kind
        self.pubsub = None

    def __enter__(self) -> Waiter:
        try:
            self.pubsub = _redis().pubsub(ignore_subscribe_messages=True)
            self.pubsub.subscribe(channel(self.check_id, self.kind))
        except (redis.RedisError, OSError):
            logger.warning("waiting for check %s by polling", self.check_id, exc_info=True)
            self.pubsub = None
        return self

    def wait(self, seconds: float) -> None:
        """Return when a change is announced, or after `seconds` (POLL_S without Redis)."""
        if self.pubsub is None:
            time.sleep(min(seconds, POLL_S))
            return
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                message = self.pubsub.get_message(timeout=max(0.0, deadline - time.monotonic()))
                if message is not None:
                    return
        except (redis.RedisError, OSError):
            self.pubsub = None
            time.sleep(min(seconds, POLL_S))

    def __exit__(self, *exc: object) -> None:
        if self.pubsub is not None:
            try:
                self.pubsub.close()
            except (redis.RedisError, OSError):
                pass
