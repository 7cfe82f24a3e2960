"""Warm sandboxes through the real engine: a pool of ready sandboxes, a fresh process per
case, and nothing of one check visible to the next one on the same worker."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

import sandbox
from contract.cases import DEFAULT_CASES
from contract.engine import run_check
from contract.warm import WarmPool, WarmSandbox

from .conftest import (
    TEST_UID,
    assert_nothing_left,
    bwrap_config,
    cannot_test,
    requires_bwrap,
)

MARKER = f"skynet-leftover-{TEST_UID}"

# Leaves every kind of trace it can in its sandbox: a file in /tmp, module state, a
# non-daemon thread, a process that daemonized, a SysV message queue, an abstract name.
LEAVES_TRACES = f"""
import os, socket, sys, threading, time, ctypes
import skynet
def score(input, output, expected=None):
    open("/tmp/{MARKER}", "w").write("left by the previous check")
    skynet.LEFT = "module state of the previous check"
    sys.modules["leftover"] = sys
    threading.Thread(target=time.sleep, args=(60,), name="{MARKER}").start()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    libc = ctypes.CDLL(None)
    libc.msgget(4242, 0o1666)
    return 1.0, {{"feedback": "Left traces behind."}}
"""

LOOKS_FOR_TRACES = """
import json, os, sys, threading, ctypes
import skynet
def score(input, output, expected=None):
    found = {
        "tmp": sorted(os.listdir("/tmp")),
        "module_state": hasattr(skynet, "LEFT") or "leftover" in sys.modules,
        "threads": [t.name for t in threading.enumerate()],
        "processes": sorted(p for p in os.listdir("/proc") if p.isdigit()),
        "message_queue": ctypes.CDLL(None).msgget(4242, 0),
    }
    return 1.0, {"feedback": json.dumps(found)}
"""


# How a worker's pool makes its sandboxes: forked by a zygote (where there is a cgroup,
# as for a root worker), or each a bubblewrap of its own.
POOLS = {
    "zygote": dict(config=lambda: bwrap_config(), zygote=True),
    "alone": dict(config=lambda: bwrap_config(), zygote=False),
}


@pytest.fixture(params=sorted(POOLS))
def pool(request):
    requires_bwrap()
    kind = POOLS[request.param]
    if request.param == "zygote" and not sandbox.zygote_possible(kind["config"]()):
        cannot_test("no cgroup here, so no zygote")
    pool = WarmPool(kind["config"], size=2, zygote=kind["zygote"])
    pool.fill()
    assert pool.wait_ready(60), pool.failure
    # A zygote exactly where one can be had (never without a cgroup to bound each check).
    assert (pool.zygote is not None) == (request.param == "zygote")
    yield pool
    pool.close()
    assert pool.fallbacks == 0
    assert_nothing_left(wait_s=5)


def test_nothing_of_one_check_is_visible_to_the_next_on_the_same_worker(pool):
    first = run_check(textwrap.dedent(LEAVES_TRACES), sandboxes=pool, timeout_s=10)
    assert first.passed, first.to_dict()
    for _ in range(3):  # whichever sandbox the pool hands over next
        seen = run_check(textwrap.dedent(LOOKS_FOR_TRACES), sandboxes=pool, timeout_s=10)
        assert seen.passed, seen.to_dict()
        for case in seen.cases:
            found = json.loads(case.feedback)
            assert found["tmp"] == [], found
            assert found["module_state"] is False
            assert found["threads"] == ["MainThread"]
            assert found["message_queue"] == -1  # no such queue in this IPC namespace
            # Only this sandbox's own processes: its init, the warm process, this case and
            # the cases forked ahead of time; nothing of the previous check.
            assert len(found["processes"]) <= 2 + 1 + 3, found["processes"]
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, MARKER)]


def _cmdline_has(pid: str, text: str) -> bool:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return text[:15] in fh.read()
    except OSError:
        return False


def test_a_case_that_crashes_or_hangs_ruins_only_itself(pool):
    source = """
        import os, signal, time
        def score(input, output, expected=None):
            if output == "other":
                os.kill(os.getpid(), signal.SIGSEGV)
            if output == "account":
                time.sleep(10**6)
            return 1.0, {"feedback": "Matches the label."}
        """
    result = run_check(textwrap.dedent(source), sandboxes=pool, timeout_s=1)
    statuses = [(c.status, c.problem) for c in result.cases]
    assert statuses == [("valid", None), ("error", "crashed"), ("timeout", "timeout")], statuses
    assert result.cases[1].params["signal_name"] == "SIGSEGV"


def test_the_cases_of_a_check_run_at_once(pool):
    """Three cases that each wait past the time limit all time out together: each had
    started before the first one ended."""
    source = """
        import time
        def score(input, output, expected=None):
            print(time.time(), flush=True)
            time.sleep(10**6)
        """
    result = run_check(textwrap.dedent(source), sandboxes=pool, timeout_s=1)
    assert [c.status for c in result.cases] == ["timeout"] * 3
    starts = sorted(float(c.stdout.split()[0]) for c in result.cases)
    # Each case ran for its full second: all three were running at the same moment.
    assert starts[-1] - starts[0] < 1.0, starts


def test_a_pool_hands_over_ready_sandboxes_and_kills_what_it_gets_back(pool):
    warm = pool.take()
    assert warm.alive and len(warm.waiting) == 3  # its case processes, forked ahead
    assert set(warm.layers) >= set(sandbox.LAYERS) - {"cgroup", "landlock", "cases_apart"}
    if pool.zygote is not None:
        assert set(warm.layers) == set(sandbox.active_layers(bwrap_config()))
    rss = warm.rss_bytes()
    assert rss is None or 1 << 20 < rss < 200 << 20
    pool.release(warm)
    assert pool.wait_ready(60)
    assert not warm.alive or warm.closed
    assert all(other is not warm for other in pool.idle())


def test_without_a_cgroup_a_pool_has_no_zygote_and_starts_each_sandbox_alone():
    """The zygote's check sandboxes share one user namespace, so only a cgroup can bound
    each one's processes: without one, every sandbox is a bubblewrap of its own."""
    requires_bwrap()
    pool = WarmPool(lambda: bwrap_config(cgroup="off"), size=1)
    try:
        pool.fill()
        assert pool.wait_ready(60), pool.failure
        assert pool.zygote is None
        result = run_check(
            "def score(i, o, e=None):\n    return 1.0, {'feedback': 'Fine label.'}\n",
            sandboxes=pool,
            timeout_s=10,
        )
        assert result.passed and "cgroup" not in result.layers
    finally:
        pool.close()
    assert_nothing_left(wait_s=5)


def test_a_sandbox_started_on_demand_runs_a_check_and_leaves_nothing():
    requires_bwrap()
    result = run_check(
        "def score(i, o, e=None):\n    return 1.0, {'feedback': 'Fine label.'}\n",
        cases=list(DEFAULT_CASES),
        sandbox_config=bwrap_config(),
    )
    assert result.passed and result.layers[0] == "namespaces"
    assert_nothing_left(wait_s=5)
    warm = WarmSandbox.start(bwrap_config(), prefork=0)
    assert warm.alive and warm.waiting == []
    assert warm.close()
    assert_nothing_left(wait_s=5)
