"""Evaluations take turns on the worker. Only evaluations.execution imports this module.

An evaluations worker runs one evaluation at a time. Without turns, a user's 600-row
evaluation held another user's 5-row one for its whole length (up to the time limit).
So an evaluation that has run for EVALUATION_TURN_S while another one waits ends its
turn: it starts no new case, lets the cases in flight end and be written, and joins the
line again at its back (`waiting_since`), sending a message for the turn it gave up.
When nobody waits it keeps the worker: an evaluation alone pays nothing for turns.

The line is the rows', not the broker's: whatever message wakes a worker, it claims the
evaluation waiting longest (execution.evaluation_claim). So the place a page shows is
the place the worker goes by, and a message sent twice cannot reorder the line.

A turn ends at its time, not at its slowest case's: a clock beside the cases asks once
a second, from EVALUATION_TURN_S on, whether another evaluation waits, and then stops
the cases in flight (their processes end; they are scored again next turn). So with 45 s
cases another evaluation waits 30 s, not 42, and with 600 s cases not 10 minutes. The
next turn finds in the row all it needs: `progress["resume_at"]`, the first case not
written, and `progress["ahead"]`, the ones after it that were (cases end in any order),
with the counts and sums so far, the seconds run, the turns taken and each model's
budget spent, and `started_at` left as the first turn set it (the rate and the time left
read over the whole evaluation, waits included, as the user lives it). The time limit
holds for the turns together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.utils import timezone

from evaluations.models import Evaluation
from evaluations.services import RUN_EVALUATION_TASK
from jobs import queue


def others_waiting(evaluation_id: int) -> bool:
    """Whether another evaluation waits for a worker."""
    return (
        Evaluation.objects.filter(status=Evaluation.Status.QUEUED)
        .exclude(pk=evaluation_id)
        .exists()
    )


class Turn:
    """The clock of one turn. `over` once the turn has run EVALUATION_TURN_S and another
    evaluation waits: asked after each write of the row, so the query runs at most once a
    chunk and only once the turn's time is up."""

    def __init__(self, evaluation_id: int, ran_before_s: float) -> None:
        self.evaluation_id = evaluation_id
        self.ran_before_s = ran_before_s
        self.started = time.monotonic()
        self.over = False

    @property
    def ran_s(self) -> float:
        """Seconds the evaluation has run in all its turns, this one so far included."""
        return self.ran_before_s + time.monotonic() - self.started

    @property
    def out_of_time(self) -> bool:
        """Whether its turns together reached the evaluations' time limit."""
        return self.ran_s >= settings.EVALUATION_TASK_TIME_LIMIT

    def check(self) -> bool:
        if not self.over and time.monotonic() - self.started >= settings.EVALUATION_TURN_S:
            self.over = others_waiting(self.evaluation_id)
        return self.over

    def clock(self, on_over: Callable[[], None]) -> Clock:
        """A clock that calls `on_over` once the turn is over, even while no case ends."""
        return Clock(self, on_over)


class Clock:
    """Asks once a second, from the turn's time on, whether the turn is over; calls
    `on_over` once when it is. A daemon thread with its own database connection, closed
    when it stops (`stop`, or the turn over)."""

    EVERY_S = 1.0

    def __init__(self, turn: Turn, on_over: Callable[[], None]) -> None:
        self.turn = turn
        self.on_over = on_over
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="evaluation-turn", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            left = settings.EVALUATION_TURN_S - (time.monotonic() - self.turn.started)
            if self.stopped.wait(max(0.0, left)):
                return
            while not self.stopped.is_set():
                if self.turn.check():
                    self.on_over()
                    return
                self.stopped.wait(self.EVERY_S)
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)


def evaluation_hand_over(evaluation_id: int, claim: int) -> bool:
    """Running to queued, at the back of the line, and a message sent for the next turn.
    False when the row stopped running under this claim meanwhile (reaped) or its user
    asked to stop it: that one ends now rather than after another wait."""
    now = timezone.now()
    handed = Evaluation.objects.filter(
        pk=evaluation_id, status=Evaluation.Status.RUNNING, claim=claim, cancel_requested=False
    ).update(status=Evaluation.Status.QUEUED, waiting_since=now, enqueued_at=now, heartbeat_at=now)
    if handed:
        queue.enqueue(RUN_EVALUATION_TASK, evaluation_id)
    return bool(handed)
