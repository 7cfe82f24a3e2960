"""/healthz: is the database reachable, is the broker reachable, is a worker alive.

Anyone may ask whether the site is up; only staff users and callers presenting
SKYNET_HEALTH_TOKEN are told which part is failing and what each worker's sandbox holds.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers


class ProbeFailed(Exception):
    """A probe that reached its part and found it failing, with what it learnt there."""

    def __init__(self, message: str, details: dict) -> None:
        super().__init__(message)
        self.details = details


def _check_database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {}


def _check_broker() -> dict:
    from skynet_web.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=0, timeout=2)
    return {}


def _check_worker() -> dict:
    from skynet_web.celery import app

    # An explicit connection, not the app's pool, so the ping goes to the broker that
    # the broker probe just reached.
    with app.connection_for_write() as conn:
        replies = app.control.broadcast(
            "sandbox_status",
            reply=True,
            timeout=settings.WORKER_PING_TIMEOUT / 1000,
            connection=conn,
        )
    if not replies:
        raise RuntimeError("no worker answered")
    workers = {name: status for reply in replies for name, status in reply.items()}
    details = {
        "workers": sorted(workers),
        # Which confinement layers hold on each worker, from its self-test at start.
        "sandbox": {name: _sandbox(status) for name, status in sorted(workers.items())},
    }
    # A worker whose sandbox cannot run checks would fail every check it takes.
    unavailable = [
        f"sandbox unavailable on {name}: {sandbox.get('reason') or 'no reason given'}"
        for name, sandbox in details["sandbox"].items()
        if not sandbox["available"]
    ]
    if unavailable:
        raise ProbeFailed("; ".join(unavailable), details)
    return details


def _sandbox(status: dict) -> dict:
    # A worker from before the sandbox said whether it can run checks answers without
    # "available"; it could, so it counts as available.
    available = status.get("available") is not False
    sandbox = {
        "layers": status.get("layers", []),
        "mode": status.get("mode"),
        "available": available,
    }
    if not available:
        sandbox["reason"] = status.get("reason")
    return sandbox


def _probe(check: Callable[[], dict]) -> dict:
    started = time.perf_counter()
    try:
        details = check()
    except ProbeFailed as exc:
        return {"ok": False, "error": str(exc)[:300], "ms": _ms(started), **exc.details}
    except Exception as exc:  # a health probe reports any failure, it never raises
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300], "ms": _ms(started)}
    return {"ok": True, "ms": _ms(started), **details}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _may_see_details(request: HttpRequest) -> bool:
    """Staff users and callers with the health token; the token is checked first, as a
    monitor asks with no session and must be answered when the database is down."""
    token = settings.HEALTH_TOKEN
    if token:
        scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
        # Constant time, so the comparison does not tell how much of a guess was right.
        if scheme.lower() == "bearer" and hmac.compare_digest(
            presented.strip().encode(), token.encode()
        ):
            return True
    try:
        return request.user.is_staff
    except DatabaseError:  # the session or the user row cannot be read: not known as staff
        return False


@never_cache
@vary_on_headers("Authorization")
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    parts = {"database": _probe(_check_database), "broker": _probe(_check_broker)}
    # A worker cannot answer a ping through a broker that is down; say so once.
    if parts["broker"]["ok"]:
        parts["worker"] = _probe(_check_worker)
    else:
        parts["worker"] = {"ok": False, "error": "broker unavailable"}
    failing = [name for name, part in parts.items() if not part["ok"]]
    status = 200 if not failing else 503
    body = {"status": "ok" if not failing else "fail"}
    if _may_see_details(request):
        body.update(failing=failing, **parts)
    return JsonResponse(body, status=status)
