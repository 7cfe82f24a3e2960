"""Stopping a running check: every case still running ends as "cancelled", its process
is killed, and the check fails at the Calls stage at once rather than at the time limit."""

from __future__ import annotations

import threading

from contract.cancel import Cancel
from contract.engine import run_check

LOOP = "def score(input, output, expected=None):\n    while True:\n        pass\n"


def test_a_cancel_ends_every_running_case_and_the_check():
    cancel = Cancel()
    started = threading.Event()

    def on_progress(partial):
        if any(s.id == "load" and s.status == "passed" for s in partial.stages):
            started.set()

    timer = threading.Thread(target=lambda: started.wait(60) and cancel.set())
    timer.start()
    # A time limit of a minute: were the cancel not heard, the cases would time out.
    result = run_check(LOOP, timeout_s=60, cancel=cancel, on_progress=on_progress)
    timer.join()
    assert started.is_set()
    assert result.passed is False
    # The cases run at once: the cancel finds them all running (the check fails at Calls),
    # or case 1 still loading while another had loaded (it fails at Load, as a case that
    # timed out while loading would). Either way the stage says why, and nothing ran on.
    failed = next(s for s in result.stages if s.id == result.failed_stage)
    assert failed.id in ("call", "load") and failed.problem == "cancelled"
    assert {c.status for c in result.cases} == {"skipped"}
    assert {c.problem for c in result.cases} <= {"cancelled", None}


def test_a_cancel_set_before_the_check_starts_runs_nothing_to_its_end():
    cancel = Cancel()
    cancel.set()
    cancel.set()  # twice is once
    result = run_check(LOOP, timeout_s=60, cancel=cancel)
    assert result.passed is False
    # Stopped while loading: the Load stage says so, and no case ran.
    load = next(s for s in result.stages if s.id == "load")
    assert (load.status, load.problem) == ("failed", "cancelled")
    assert {c.status for c in result.cases} == {"skipped"}


def test_a_waker_registered_after_the_cancel_is_called_at_once():
    cancel = Cancel()
    calls = []
    cancel.on_set(lambda: calls.append("before"))
    cancel.set()
    cancel.on_set(lambda: calls.append("after"))
    assert calls == ["before", "after"] and cancel.is_set()
