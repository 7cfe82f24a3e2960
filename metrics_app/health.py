"""/healthz: is the database reachable, is the broker reachable, is a worker alive."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


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
    return {
        "workers": sorted(workers),
        # Which confinement layers hold on each worker, from its self-test at start.
        "sandbox": {
            name: {"layers": status.get("layers", []), "mode": status.get("mode")}
            for name, status in sorted(workers.items())
        },
    }


def _probe(check: Callable[[], dict]) -> dict:
    started = time.perf_counter()
    try:
        details = check()
    except Exception as exc:  # a health probe reports any failure, it never raises
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300], "ms": _ms(started)}
    return {"ok": True, "ms": _ms(started), **details}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    parts = {"database": _probe(_check_database), "broker": _probe(_check_broker)}
    # A worker cannot answer a ping through a broker that is down; say so once.
    if parts["broker"]["ok"]:
        parts["worker"] = _probe(_check_worker)
    else:
        parts["worker"] = {"ok": False, "error": "broker unavailable"}
    failing = [name for name, part in parts.items() if not part["ok"]]
    body = {"status": "ok" if not failing else "fail", "failing": failing, **parts}
    return JsonResponse(body, status=200 if not failing else 503)
