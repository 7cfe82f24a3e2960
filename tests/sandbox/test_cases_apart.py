"""A case can only ruin itself: the cases of one sandbox, each a process it forks, all of
one uid, can neither read nor rewrite one another's memory, nor signal, limit or
throttle one another. In a check (three cases through one sandbox), in an evaluation
(many cases through the one metric sandbox it keeps, a window at a time) and between a
run's program and the metric scoring it, which unconfined share the uid with no pid
namespace between them (under bubblewrap each is a sandbox of its own, out of the other's
sight: tests/sandbox/test_zygote.py).

Each attack runs in every mode: a zygote's check sandbox, a bubblewrap of its own with and
without a cgroup, unconfined with and without one. The attacker and its victims meet
through files in a folder of /tmp, so each victim is alive, holding its expected value
and its feedback, while it is attacked; it returns that feedback, built in its own
memory, only once the attacker is done with it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import shutil
import uuid

import pytest

import sandbox
from contract.artifacts import Artifact
from contract.cases import Case
from contract.engine import run_check
from contract.evaluation import evaluate
from contract.runner import OnDemand
from contract.warm import WarmPool
from skynet import _apart

from .conftest import (
    MODES,
    assert_nothing_left,
    bwrap_config,
    cannot_test,
    config_for,
    requires_bwrap,
)

REFUSED = ("EACCES", "EPERM")

# What the attacker and its victims share: meeting in a folder, and the victim's side.
MEETING = """
import errno, json, os, time

MEET = {meet!r}


def announce(name):
    os.makedirs(MEET, exist_ok=True)
    open(os.path.join(MEET, name), "w").close()


def wait_for(name):
    while not os.path.exists(os.path.join(MEET, name)):
        time.sleep(0.005)


def victims(count):
    \"\"\"The pids of `count` victims, each as it announces itself.\"\"\"
    seen = []
    while len(seen) < count:
        names = os.listdir(MEET) if os.path.isdir(MEET) else []
        for name in sorted(names):
            pid = int(name.split("-")[1]) if name.startswith("victim-") else None
            if pid is not None and pid not in seen:
                seen.append(pid)
                yield pid
        time.sleep(0.005)


def outcome(action):
    try:
        return action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


def victim(expected):
    # Built here: this process's memory holds the feedback it will return.
    feedback = "kept " + expected["label"]
    announce(f"victim-{{os.getpid()}}")
    wait_for(f"done-{{os.getpid()}}")
    return feedback


def attack_all(count):
    found = {{"warm": outcome(lambda: os.kill(os.getppid(), 0) or "done"), "victims": []}}
    for pid in victims(count):
        found["victims"].append(attack(pid))
        announce(f"done-{{pid}}")
    return found
"""

# Reads each victim's memory for its expected value and rewrites the feedback it holds,
# and reads its environment and descriptors.
READS = """
import re


def regions(pid):
    with open(f"/proc/{pid}/maps") as fh:
        for line in fh:
            span, perms = line.split()[:2]
            if perms.startswith("rw"):
                yield [int(x, 16) for x in span.split("-")]


def forge(pid):
    \"\"\"Every expected value of the victim's found in its memory; each feedback it holds
    rewritten from "kept" to "lost".\"\"\"
    stolen = set()
    feedback = re.compile(("k" + "ept secret-").encode())
    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
        for start, end in regions(pid):
            # 1 MiB at a time, overlapping, so no string is missed at a seam.
            for at in range(start, end, (1 << 20) - 64):
                try:
                    mem.seek(at)
                    chunk = mem.read(min(1 << 20, end - at))
                except OSError:
                    break
                stolen.update(m.decode() for m in re.findall(rb"secret-[0-9]+", chunk))
                for match in feedback.finditer(chunk):
                    mem.seek(at + match.start())
                    mem.write(b"lost")
    return sorted(stolen)


def attack(pid):
    return {
        "memory": outcome(lambda: forge(pid)),
        "environ": outcome(lambda: len(open(f"/proc/{pid}/environ", "rb").read())),
        "descriptors": outcome(lambda: os.listdir(f"/proc/{pid}/fd")),
    }
"""

# Sets each victim's limits and scheduling (to values that change nothing, so only the
# permission is tested), then kills it.
SIGNALS = """
import ctypes, platform, resource, signal

IOPRIO_SET = {"x86_64": 251, "aarch64": 30}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)


def ioprio_set(pid):
    if libc.syscall(IOPRIO_SET, 1, pid, (2 << 13) | 4) != 0:
        raise OSError(ctypes.get_errno(), "ioprio_set")


def attack(pid):
    return {
        "prlimit": outcome(lambda: resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))),
        "renice": outcome(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
        "renice_all": outcome(lambda: os.setpriority(os.PRIO_USER, 0, 19)),
        "affinity": outcome(lambda: os.sched_setaffinity(pid, os.sched_getaffinity(0))),
        "scheduler": outcome(
            lambda: os.sched_setscheduler(pid, os.SCHED_BATCH, os.sched_param(0))
        ),
        "ioprio": outcome(lambda: ioprio_set(pid)),
        "kill": outcome(lambda: os.kill(pid, signal.SIGKILL)),
    }
"""

ATTACKS = {"reads": READS, "signals": SIGNALS}


def _metric(meet: str, attack: str, victims: int) -> str:
    """A metric whose case with output "attacker" attacks the `victims` other cases."""
    return (
        MEETING.format(meet=meet)
        + ATTACKS[attack]
        + f"""

def score(input, output, expected=None):
    if output == "attacker":
        return 1.0, {{"feedback": json.dumps(attack_all({victims}))}}
    return 1.0, {{"feedback": victim(expected)}}
"""
    )


def _cases(count: int) -> list[Case]:
    """The attacker first, then `count` victims, each with its own expected value."""
    attacker = Case(input={"n": 0}, output="attacker", expected={"label": "none"})
    victims = [
        Case(input={"n": n}, output="victim", expected={"label": f"secret-{n}"})
        for n in range(1, count + 1)
    ]
    return [attacker, *victims]


def _assert_out_of_reach(attack: str, report: dict, victims: int) -> None:
    """Every attempt of the attacker was refused, on every victim."""
    assert len(report["victims"]) == victims, report
    tried = [value for found in report["victims"] for value in found.values()]
    if attack == "signals":
        assert report["warm"] in REFUSED, report
    assert all(value in REFUSED for value in tried), report


def _assert_untouched(rows: list[tuple[str, str | None]], victims: int) -> None:
    """Each victim scored, returning the feedback it built: (status, feedback) per case."""
    assert rows == [("valid", f"kept secret-{n}") for n in range(1, victims + 1)], rows


# Where a check's or an evaluation's sandboxes come from: a root worker's pool, forked by
# its zygote, or one started for it, in every mode.
SOURCES = ["zygote", *MODES]


@pytest.fixture(params=SOURCES)
def sandboxes(request):
    if request.param == "zygote":
        requires_bwrap()
        if not sandbox.zygote_possible(bwrap_config()):
            cannot_test("no cgroup here, so no zygote")
        pool = WarmPool(bwrap_config, size=2, zygote=True)
        pool.fill()
        assert pool.wait_ready(60), pool.failure
        yield pool
        pool.close()
    else:
        yield OnDemand(config_for(request.param))
    assert_nothing_left(wait_s=5)


@pytest.fixture
def meet():
    """A folder name of this test's own: unconfined, the sandbox's /tmp is the host's."""
    path = f"/tmp/skynet-apart-{uuid.uuid4().hex}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


# Where the kernel's Landlock can scope signals (ABI 6, Linux 6.12): only there does a
# sandbox claim the layer "cases_apart", and only there are signals refused.
SCOPES_SIGNALS = _apart.can_scope_signals(ctypes.CDLL(None, use_errno=True))


@pytest.fixture(params=sorted(ATTACKS))
def attack(request) -> str:
    if request.param == "signals" and not SCOPES_SIGNALS:
        cannot_test("this kernel's Landlock cannot scope signals (ABI 6, Linux 6.12)")
    return request.param


def test_no_case_of_a_check_can_reach_another(sandboxes, meet, attack):
    cases = _cases(2)
    result = run_check(_metric(meet, attack, 2), cases=cases, sandboxes=sandboxes, timeout_s=30)
    rows = [(case.status, case.feedback) for case in result.cases]
    assert rows[0][0] == "valid", result.to_dict()
    _assert_out_of_reach(attack, json.loads(rows[0][1]), 2)
    _assert_untouched(rows[1:], 2)
    assert ("cases_apart" in result.layers) == SCOPES_SIGNALS, result.layers


def test_no_case_of_an_evaluation_can_reach_another(sandboxes, meet, attack):
    """Seven victims through one metric sandbox, four cases at a time: the attacker holds
    its place while the victims come and go, each forked after the one before ended."""
    scored = []
    ended = evaluate(
        _metric(meet, attack, 7),
        _cases(7),
        on_scored=scored.append,
        sandboxes=sandboxes,
        timeout_s=60,
        window=4,
    )
    assert ended.stopped is None, ended
    rows = {s.index: (s.row.status, s.row.feedback) for s in scored}
    assert rows[0][0] == "valid", rows
    _assert_out_of_reach(attack, json.loads(rows[0][1]), 7)
    _assert_untouched([rows[n] for n in range(1, 8)], 7)
    assert ("cases_apart" in ended.layers) == SCOPES_SIGNALS, ended.layers


# The run's program attacks the metric processes scoring the other cases: they run in the
# metric's sandbox, which unconfined shares the uid and the process table with the run's.
PROGRAM = """

def run(artifact, input):
    if input["n"] == 0:
        return json.dumps(attack_all({victims}))
    return "ran"
"""

SCORES_THE_RUN = """

def score(input, output, expected=None):
    if input["n"] == 0:
        return 1.0, {"feedback": output}
    return 1.0, {"feedback": victim(expected)}
"""


def test_a_runs_program_cannot_reach_the_metric_scoring_the_other_cases(meet, attack):
    """Unconfined with a cgroup: without one, the two sandboxes of one uid share the
    rlimit split's eight processes, too few for both to run their cases."""
    victims = 3
    shared = MEETING.format(meet=meet) + ATTACKS[attack]
    program = Artifact.python(shared + PROGRAM.format(victims=victims)).to_job()
    # Both sandboxes as one uid, not exclusive: prepare() sweeps every process of an
    # exclusive uid as it starts a sandbox, which would end the metric's as the run's starts.
    config = dataclasses.replace(config_for("unconfined"), uid_exclusive=False)
    scored = []
    ended = evaluate(
        shared + SCORES_THE_RUN,
        _cases(victims),
        on_scored=scored.append,
        sandboxes=OnDemand(config),
        timeout_s=60,
        artifact=program,
        window=victims + 1,
    )
    assert ended.stopped is None, ended
    rows = {s.index: (s.row.status, s.row.feedback) for s in scored}
    assert rows[0][0] == "valid", rows
    _assert_out_of_reach(attack, json.loads(rows[0][1]), victims)
    _assert_untouched([rows[n] for n in range(1, victims + 1)], victims)
    assert_nothing_left(wait_s=5)


def test_the_self_test_finds_cases_apart_and_would_see_them_not():
    requires_bwrap()
    for config in (bwrap_config(), config_for("unconfined")):
        report = sandbox.self_test(config)
        assert report["probes"]["siblings_out_of_reach"], report
        assert ("cases_apart" in report["layers"]) == SCOPES_SIGNALS, report
    # The probe can tell: forked here, as root (CAP_SYS_PTRACE), one case reaches the other.
    assert not _apart.probe(ctypes.CDLL(None, use_errno=True), scope_signals=False)
