"""Reads for the run pages: the user's runs (every view that touches a run gets it through
get_run_for_user), a run's candidates and recent events, and the wait of its live panel,
which the runs worker wakes (jobs.notify, kind "run") after every write."""

from __future__ import annotations

import hashlib
import json
import time

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from jobs import notify
from runs import sweeps
from runs.models import Run, RunCandidate, RunEvent

# The events the run page's log shows, newest first.
LOG_EVENTS = 30
# The events it reads to show them: more, since a series of iterations that proposed
# nothing reads as one line (runs.eventlog), and should be counted whole.
LOG_WINDOW = 4 * LOG_EVENTS
# Every iteration starts with one; each event in the log names its iteration already.
QUIET_KINDS = ("iteration",)


def get_run_for_user(user: AbstractBaseUser, pk: int) -> Run:
    return get_object_or_404(
        Run.objects.select_related("dataset", "contract_check", "metric_version__metric")
        # The run page polls: it reads neither gepa's checkpoint nor the dataset's rows
        # (the bundle reads the file when it is asked for).
        .defer("checkpoint", "dataset__raw", "dataset__rows", "dataset__row_numbers"),
        pk=pk,
        owner=user,
    )


def runs_for_user(user: AbstractBaseUser) -> QuerySet[Run]:
    return (
        Run.objects.filter(owner=user)
        .select_related("dataset")
        .defer("checkpoint", "dataset__raw", "dataset__rows", "dataset__row_numbers")
    )


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
