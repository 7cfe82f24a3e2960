"""The run's metric-call budget, held as a ceiling.

gepa checks its `max_metric_calls` only between iterations, and an iteration then scores
two minibatches and, for a candidate it accepts, every validation case: left to gepa, a
run with a budget of 150 could end at 151 or 156. `MetricCalls` counts a batch's calls
before any of its cases runs, the way gepa and the run page count them (one a case of
the batch), and refuses a batch that would pass the budget: `CallsSpent` then ends the
run there, finished on its metric calls, with its best candidate so far.

A batch is refused whole rather than cut to what is left: gepa pairs a batch's scores
with its cases by position (a minibatch's sum decides a proposal; a candidate's scores
on the validation cases make the Pareto front), so a shorter batch would be scored as a
worse one, or break gepa's state, and its calls would be wasted anyway.

The count goes on across attempts: a resumed run starts from the calls its earlier
attempts made, those made after the checkpoint it resumes from included (gepa's own
count, restored from the checkpoint, no longer knows of them, yet each was a real call
of the metric), so the run page's count never goes back and never passes the budget.
"""

from __future__ import annotations

import threading


class CallsSpent(Exception):
    """The next batch (`needed` metric calls) would take the run past its budget."""

    def __init__(self, used: int, needed: int, limit: int) -> None:
        # What gepa writes to the run's log when this ends an iteration.
        super().__init__(
            f"{used} of {limit} metric calls used: the next batch of {needed} would pass "
            "the budget, so the run ends here"
        )
        self.used = used
        self.needed = needed
        self.limit = limit


class MetricCalls:
    """The metric calls a run has made, of its budget `limit`. Thread-safe: DSPy GEPA
    may score two batches at once."""

    def __init__(self, limit: int, used: int = 0) -> None:
        self.limit = limit
        self.used = used
        self._lock = threading.Lock()

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    def take(self, needed: int) -> None:
        """Count a batch of `needed` calls about to run; CallsSpent, counting nothing,
        when it would pass the budget."""
        with self._lock:
            if self.used + needed > self.limit:
                raise CallsSpent(self.used, needed, self.limit)
            self.used += needed

    def catch_up(self, counted: int) -> None:
        """gepa's own count (its state's), which can be ahead of ours only when an
        attempt's last progress was not written before its worker was lost: its
        checkpoint then knows of calls the row does not."""
        with self._lock:
            self.used = max(self.used, counted)
