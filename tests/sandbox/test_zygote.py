"""Check sandboxes forked by a zygote (contract.zygote), through the real engine.

The zygote keeps two capabilities inside bwrap's user namespace to make each check its
own namespaces; these tests hold what a metric in such a sandbox can and cannot do: no
capability left, its own pid namespace (the zygote and other sandboxes out of sight and
out of reach), its own /tmp, the filter, the uid, the cgroup's bounds, and a clean end.
"""

from __future__ import annotations

import json
import os
import textwrap
import threading
import time

import pytest

import sandbox
from contract.cases import DEFAULT_CASES
from contract.engine import run_check
from contract.warm import WarmPool, WarmSandbox
from contract.zygote import Zygote

from .conftest import TEST_UID, assert_nothing_left, bwrap_config, cannot_test, requires_bwrap

ONE_CASE = [DEFAULT_CASES[0]]


def _zygote_config() -> sandbox.SandboxConfig:
    requires_bwrap()
    cfg = bwrap_config()
    if not sandbox.zygote_possible(cfg):
        cannot_test("no cgroup here, so no zygote (each sandbox starts alone)")
    return cfg


@pytest.fixture
def pool():
    pool = WarmPool(_zygote_config, size=2)
    pool.fill()
    assert pool.wait_ready(60), pool.failure
    assert pool.zygote is not None and pool.zygote.alive
    yield pool
    pool.close()
    # Every sandbox came from the zygote: none had to be started alone.
    assert pool.fallbacks == 0
    assert_nothing_left(wait_s=5)


def _findings(pool, body: str, *, timeout_s: float = 10, cases=ONE_CASE) -> list[dict]:
    source = "import json, os, sys\n" + textwrap.dedent(body)
    result = run_check(source, cases=cases, sandboxes=pool, timeout_s=timeout_s)
    assert result.passed, result.to_dict()
    return [json.loads(case.feedback) for case in result.cases]


def test_a_check_sandbox_holds_no_capability_and_every_layer(pool):
    (found,) = _findings(
        pool,
        """
        def score(input, output, expected=None):
            status = dict(
                line.split(":", 1) for line in open("/proc/self/status").read().splitlines()
            )
            caps = {k: int(status[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
            return 1.0, {"feedback": json.dumps({
                "caps": caps, "seccomp": status["Seccomp"].strip(),
                "uid": os.getuid(), "nnp": status["NoNewPrivs"].strip(),
                "env": sorted(os.environ),
            })}
        """,
    )
    assert found["caps"] == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0)
    assert (found["seccomp"], found["nnp"]) == ("2", "1")
    assert found["uid"] not in (0, os.getuid())
    assert set(found["env"]) <= set(sandbox.sandbox_env()) | {"PWD"}


def test_namespaces_mounts_and_privileged_calls_are_refused(pool):
    (found,) = _findings(
        pool,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def score(input, output, expected=None):
            tried = {
                "unshare_mount": libc.unshare(0x00020000),
                "unshare_user": libc.unshare(0x10000000),
                "mount_tmpfs": libc.mount(b"t", b"/tmp", b"tmpfs", 0, None),
                "umount_proc": libc.umount2(b"/proc", 2),
                "sethostname": libc.sethostname(b"x", 1),
                "chroot": libc.chroot(b"/tmp"),
            }
            return 1.0, {"feedback": json.dumps(tried)}
        """,
    )
    assert all(value == -1 for value in found.values()), found


def test_the_zygote_and_other_sandboxes_are_out_of_sight_and_reach(pool):
    """A case that kills every process it can kills only its own sandbox's; the zygote
    and the pool's other sandboxes live on and serve the next check."""
    other = pool.take()
    try:
        (found,) = _findings(
            pool,
            """
            import signal
            def score(input, output, expected=None):
                seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
                mine = os.getpid()
                return 1.0, {"feedback": json.dumps({"seen": seen, "me": mine})}
            """,
        )
        # Its own pid namespace: its init, the warm process's cases, itself; nothing else.
        assert max(found["seen"]) <= 8 and 1 in found["seen"], found
        result = run_check(
            "import os, signal\n"
            "def score(input, output, expected=None):\n"
            "    os.kill(-1, signal.SIGKILL)\n"
            "    return 1.0, {'feedback': 'survived'}\n",
            cases=ONE_CASE,
            sandboxes=pool,
            timeout_s=5,
        )
        # kill(-1) spares its namespace's init (the warm process) and itself, so the case
        # lives and says so; once in a CI run under load it ended as an error instead (not
        # yet explained). Either way it reached nothing outside its own sandbox:
        case = result.cases[0]
        assert case.feedback == "survived" or case.status == "error", result.to_dict()
        assert pool.zygote.alive and other.alive
    finally:
        pool.release(other)
    assert pool.wait_ready(30)
    again = run_check(
        "def score(i, o, e=None):\n    return 1.0, {'feedback': 'Matches the label.'}\n",
        sandboxes=pool,
        timeout_s=5,
    )
    assert again.passed, again.to_dict()


def test_two_sandboxes_of_one_zygote_share_no_tmp_ipc_or_processes(pool):
    first, second = pool.take(), pool.take()
    try:
        assert first.body.pid != second.body.pid
        for warm in (first, second):
            assert set(warm.layers) == set(sandbox.active_layers(bwrap_config()))
        writes = run_check(
            "import ctypes\n"
            "def score(i, o, e=None):\n"
            "    open('/tmp/left-here', 'w').write('x')\n"
            "    ctypes.CDLL(None).msgget(4343, 0o1666)\n"
            "    return 1.0, {'feedback': 'Wrote a file and a queue.'}\n",
            cases=ONE_CASE,
            sandboxes=_Given(first),
            timeout_s=5,
        )
        assert writes.passed, writes.to_dict()
        looks = run_check(
            "import ctypes, json, os\n"
            "def score(i, o, e=None):\n"
            "    seen = {'tmp': os.listdir('/tmp'), 'queue': ctypes.CDLL(None).msgget(4343, 0)}\n"
            "    return 1.0, {'feedback': json.dumps(seen)}\n",
            cases=ONE_CASE,
            sandboxes=_Given(second),
            timeout_s=5,
        )
        assert json.loads(looks.cases[0].feedback) == {"tmp": [], "queue": -1}
    finally:
        pool.release(first)
        pool.release(second)


class _Given:
    """Hands the engine one particular sandbox, and kills it after."""

    def __init__(self, warm: WarmSandbox) -> None:
        self.warm = warm

    def take(self) -> WarmSandbox:
        return self.warm

    def release(self, warm: WarmSandbox) -> None:
        warm.close()


def test_a_fork_bomb_is_held_by_its_cgroup_and_starves_no_other_sandbox(pool):
    bomb = textwrap.dedent(
        """
        import os, time
        def score(input, output, expected=None):
            while True:
                try:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                except OSError:
                    time.sleep(0.01)
        """
    )
    outcome = {}
    thread = threading.Thread(
        target=lambda: outcome.update(
            r=run_check(bomb, cases=ONE_CASE, sandboxes=pool, timeout_s=4)
        )
    )
    thread.start()
    try:
        time.sleep(1.5)  # the bomb is at its cgroup's pids.max by now
        forks = run_check(
            "import os\n"
            "def score(i, o, e=None):\n"
            "    pids = [os.fork() or os._exit(0) for _ in range(20)]\n"
            "    [os.waitpid(p, 0) for p in pids]\n"
            "    return 1.0, {'feedback': f'Forked {len(pids)} processes.'}\n",
            cases=ONE_CASE,
            sandboxes=pool,
            timeout_s=4,
        )
        bomb_running = thread.is_alive()
    finally:
        thread.join()
    assert forks.passed and forks.cases[0].feedback == "Forked 20 processes.", forks.to_dict()
    assert bomb_running, "the check only ran after the bomb ended: no concurrency"
    assert outcome["r"].cases[0].status == "timeout"


def test_the_memory_limit_holds_for_the_whole_check_sandbox(pool):
    (found,) = _findings(
        pool,
        """
        import time
        def score(input, output, expected=None):
            r, w = os.pipe()
            for _ in range(4):
                if os.fork() == 0:
                    try:
                        block = b"x" * (400 << 20)
                        os.write(w, b"y")
                    except MemoryError:
                        os.write(w, b"n")
                    time.sleep(30)
                    os._exit(0)
            time.sleep(2)
            os.set_blocking(r, False)
            try:
                got = os.read(r, 16)
            except BlockingIOError:
                got = b""
            return 1.0, {"feedback": json.dumps({"held": got.count(b"y")})}
        """,
    )
    assert found["held"] <= 1, found  # 512 MB for the check: one 400 MB block at most


def test_a_zygote_ends_with_everything_it_forked():
    zygote = Zygote.start(_zygote_config())
    try:
        warm = WarmSandbox.from_zygote(zygote)
        assert warm.alive and len(warm.waiting) == 3
        rss = warm.rss_bytes()
        assert rss is not None and 1 << 20 < rss < 400 << 20
    finally:
        zygote.close()
    assert not warm.alive or warm.close()
    warm.close()
    assert_nothing_left(TEST_UID, wait_s=5)


def test_a_zygote_that_died_is_replaced_and_its_sandboxes_with_it(pool):
    import signal

    dead = pool.zygote
    os.kill(dead.proc.pid, signal.SIGKILL)
    dead.proc.wait(timeout=10)
    metric = "def score(i, o, e=None):\n    return 1.0, {'feedback': 'Matches the label.'}\n"
    # A check that gets a sandbox dying with it is told so (a crash), and never hangs.
    during = run_check(metric, sandboxes=pool, timeout_s=5)
    told = [c.problem for c in during.cases if c.status not in ("valid", "skipped")]
    assert set(told) <= {"crashed"}, during.to_dict()
    assert during.passed or during.stage("load").problem in ("crashed", None)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (pool.zygote is dead or pool.zygote is None):
        time.sleep(0.01)
    assert pool.wait_ready(30)
    assert pool.zygote is not dead and pool.zygote.alive
    after = run_check(metric, sandboxes=pool, timeout_s=5)
    assert after.passed, after.to_dict()
    assert not dead.alive
