"""Reads for the run pages: a run's candidates and recent events, and the wait of its live
panel, which the runs worker wakes (checks.notify, kind "run") after every write."""

from __future__ import annotations

import hashlib
import json
import time

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404

from checks import notify
from optimizations import sweeps
from optimizations.models import RunCandidate, RunEvent
from submissions.models import Run

# The events the run page's log shows, newest first.
LOG_EVENTS = 30
# The events it reads to show them: more, since a series of iterations that proposed
# nothing reads as one line (optimizations.eventlog), and should be counted whole.
LOG_WINDOW = 4 * LOG_EVENTS
# Every iteration starts with one; each event in the log names its iteration already.
QUIET_KINDS = ("iteration",)


def candidates_of(run: Run) -> list[RunCandidate]:
    return list(RunCandidate.objects.filter(run=run).order_by("idx"))


def recent_events(run: Run, limit: int = LOG_WINDOW) -> list[RunEvent]:
    return list(
        RunEvent.objects.filter(run=run).exclude(kind__in=QUIET_KINDS).order_by("-id")[:limit]
    )


def live_token(run: Run) -> str:
    """Changes whenever the row does in a way the run page shows: its status, a stop asked
    for, a new attempt, or the progress the worker wrote (which a new candidate or event
    comes with)."""
    seen = json.dumps(
        [run.attempt, run.cancel_requested, run.failure, run.progress or {}],
        sort_keys=True,
        default=str,
    )
    digest = hashlib.blake2b(seen.encode("utf-8"), digest_size=6).hexdigest()
    return f"{run.status}.{digest}"


def wait_for_change(run: Run, since: str, seconds: float) -> Run:
    """The run, as the page shows it (a lost one as the next sweep will leave it), as soon
    as it differs from what the page showed (`since`, its live_token then) or stops being
    live, or as it is after `seconds`."""
    deadline = time.monotonic() + seconds
    with notify.Waiter(run.pk, "run") as waiter:
        while True:
            # Subscribed before this read: a change right after it is not missed.
            try:
                run.refresh_from_db()
            except ObjectDoesNotExist:  # deleted while its panel waited
                raise Http404 from None
            run = sweeps.as_the_sweep_will_leave_it(run)
            left = deadline - time.monotonic()
            if not run.is_live or live_token(run) != since or left <= 0:
                return run
            waiter.wait(left)
