"""The one supervisor the run command, the benchmarks and the tests start processes with:
it sees a child exit, keeps each child's output, and stops them all, even one that ignores
SIGTERM, with whatever that child started."""

from __future__ import annotations

import os
import sys

from skynet_web.processes import Supervisor
from tests.conftest import wait_for

SLEEPER = "import time; print('up', flush=True); time.sleep(600)"
STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "print(kid.pid, flush=True)\n"
    "time.sleep(600)\n"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_that_exits_is_seen_and_its_output_kept(tmp_path):
    children = Supervisor()
    children.start("quick", [sys.executable, "-c", "print('done')"], log=tmp_path / "q.log")
    children.start("slow", [sys.executable, "-c", SLEEPER], log=tmp_path / "s.log")
    try:
        wait_for(lambda: [c.name for c in children.exited()] == ["quick"], 30)
        assert children.children[0].tail() == "done"
        wait_for(lambda: children.children[1].tail() == "up", 30)
    finally:
        children.stop(grace_s=10)
    assert [c.name for c in children.exited()] == ["quick", "slow"]


def test_stop_ends_a_child_that_ignores_sigterm_and_what_it_started(tmp_path):
    children = Supervisor(env={**os.environ})
    stubborn = children.start("stubborn", [sys.executable, "-c", STUBBORN], log=tmp_path / "x")
    grandchild = int(wait_for(lambda: children.children[0].tail(), 30))
    assert os.getpgid(grandchild) == stubborn.pid  # its own group, the child's
    children.stop(grace_s=0.5)
    assert stubborn.returncode == -9
    wait_for(lambda: not _alive(grandchild), 30)
    children.stop()  # again: nothing left to do, and no error
