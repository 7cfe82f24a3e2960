"""One user's checks take one of the checks worker's processes at a time.

Three checks of one user whose cases sleep used to take both processes of the checks
worker, and another user's 0.04 s check waited 48 s behind them (10 minutes with
`timeout_s: 600`). Now a check is claimed only while its owner has none running
(worker_writes.claim says so in its one UPDATE), so a user holds at most one process,
half of the default worker's two, and another user's check waits only when two other
users' checks are running.

The line is the rows', as the evaluations' is: a message that wakes a worker claims the
check it names if it can, and else the oldest queued check whose owner has none
running; a message that finds none ends. When a check ends, a message is sent for its
owner's next one, which may have had its message spent meanwhile. On PostgreSQL two
claims of one owner's checks at the same moment can both pass the test (each reads the
rows as they were before the other), so there the later of the two gives its claim back.

The page and the API say why a check waits: its owner's other check is running, or so
many checks are ahead of it (`waiting`).
"""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from checks import worker_writes
from checks.models import Check
from checks.services import RUN_CHECK_TASK
from jobs import queue

# How many other queued checks a message tries before it ends.
CANDIDATES = 5


def claim_fairest(check_id: int) -> Check | None:
    """Claim check `check_id`, or the oldest queued check of a user with none running;
    None when there is none this worker may take."""
    claimed = _claim(check_id)
    if claimed is not None:
        return claimed
    candidates = (
        Check.objects.filter(status=Check.Status.QUEUED)
        .exclude(owner_id__in=_busy_owners())
        .order_by("enqueued_at", "pk")
        .values_list("pk", flat=True)[:CANDIDATES]
    )
    for pk in list(candidates):
        claimed = _claim(pk)
        if claimed is not None:
            return claimed
    return None


def _busy_owners():
    """The users with a check running: theirs wait (a subquery, never read here)."""
    return Check.objects.filter(status=Check.Status.RUNNING).values("owner_id")


def _claim(check_id: int) -> Check | None:
    claimed = worker_writes.claim(check_id)
    if claimed is None or connection.vendor != "postgresql":
        return claimed  # SQLite writes one statement at a time: its test held
    first = (
        Check.objects.filter(owner_id=claimed.owner_id, status=Check.Status.RUNNING)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
    if first == check_id:
        return claimed
    # Another claim of this owner's passed at the same moment: the later gives it back.
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.QUEUED, started_at=None, worker=""
    )
    return None


def wake_next(owner_id: int) -> None:
    """Send a message for `owner_id`'s oldest queued check, if any: its own message may
    have been spent while their check before it ran."""
    pk = (
        Check.objects.filter(owner_id=owner_id, status=Check.Status.QUEUED)
        .order_by("enqueued_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    if pk is not None:
        queue.enqueue(RUN_CHECK_TASK, pk)


def waiting(check: Check) -> dict | None:
    """Why a queued check waits: {"reason": "own_check_running"} while its owner has a
    check running, else {"reason": "worker_busy", "ahead": N} with the queued checks
    before it that may run first. None for a check that is not queued."""
    if check.status != Check.Status.QUEUED:
        return None
    running = Check.objects.filter(owner_id=check.owner_id, status=Check.Status.RUNNING)
    if running.exclude(pk=check.pk).exists():
        return {"reason": "own_check_running"}
    ahead = (
        Check.objects.filter(
            status=Check.Status.QUEUED, enqueued_at__lt=check.enqueued_at or timezone.now()
        )
        .exclude(owner_id__in=_busy_owners())
        .count()
    )
    return {"reason": "worker_busy", "ahead": ahead}
