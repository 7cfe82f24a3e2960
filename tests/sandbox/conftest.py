"""Harness for the sandbox tests: real processes through sandbox, no mocks.

Every test runs its sandboxes as a uid of its own (TEST_UID, one this pytest process holds a
lock on for its whole life), so "nothing left running" can be checked by scanning /proc for
that uid, and so concurrent test runs on the same machine cannot see each other's
processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import sandbox
from sandbox import site

HERE = Path(__file__).resolve().parent
RUNTIME_PACKAGE = HERE.parent.parent / "runtime" / "skynet"


def _claim_test_uid() -> tuple[int, object]:
    """One uid per pytest process, in the sandboxes' range but far above any real slot
    number: the first of 90 that no other live test process holds (an flock on a file
    per uid, released by the kernel when the holder exits, however it exits)."""
    start = os.getpid() % 90
    for step in range(90):
        uid = sandbox.DEFAULT_UID + 300 + (start + step) % 90
        try:
            lock = open(f"/tmp/skynet-sandbox-test-uid-{uid}.lock", "a")
        except OSError:  # another user's file: theirs
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        return uid, lock
    raise RuntimeError("90 sandbox test runs at once on this machine: no test uid is free")


TEST_UID, _TEST_UID_LOCK = _claim_test_uid()

IS_ROOT = os.geteuid() == 0
# CI sets this: a sandbox test that cannot run there is a failure, not a skip.
REQUIRE_SANDBOX = os.environ.get("SKYNET_REQUIRE_SANDBOX_TESTS") == "1"


def _with_site(config: sandbox.SandboxConfig) -> sandbox.SandboxConfig:
    """As the worker makes its configs: the libraries a metric may import staged and
    bound (sandbox.site), so every wall is tested with them in the sandbox."""
    if config.site_packages is not None:
        return config
    staged = site.site_packages(sandbox.stage_gid(config))
    return dataclasses.replace(config, site_packages=staged)


def bwrap_config(**changes) -> sandbox.SandboxConfig:
    # Not uid_exclusive on purpose: kill() must find everything through the namespace,
    # as it has to with the shared sandbox uid in production.
    return _with_site(sandbox.SandboxConfig(uid=TEST_UID, **changes))


def unconfined_config(**changes) -> sandbox.SandboxConfig:
    # The unconfined mode's recommended setup: one uid per slot, so kill() can sweep it.
    changes.setdefault("uid_exclusive", True)
    changes.setdefault("uid", TEST_UID)
    return _with_site(sandbox.SandboxConfig(mode="unconfined", **changes))


# Every mode the code supports, each with and without a cgroup for the check's limits.
MODES = {
    "bwrap": lambda: bwrap_config(),
    "bwrap-rlimits": lambda: bwrap_config(cgroup="off"),
    "unconfined": lambda: unconfined_config(),
    "unconfined-rlimits": lambda: unconfined_config(cgroup="off"),
}


def cannot_test(reason: str) -> None:
    """Skip loudly, or fail where the sandbox tests must run (CI)."""
    if REQUIRE_SANDBOX:
        pytest.fail(f"SANDBOX TEST CANNOT RUN HERE: {reason}")
    pytest.skip(f"SANDBOX TEST SKIPPED: {reason}")


def config_for(mode: str) -> sandbox.SandboxConfig:
    """The config of one of MODES, or a loud skip where this machine cannot run it."""
    requires_root()
    cfg = MODES[mode]()
    missing = sandbox.availability(cfg)
    if missing is not None:
        cannot_test(f"the {mode} sandbox is unavailable here ({missing})")
    if mode in ("bwrap", "unconfined") and "cgroup" not in sandbox.active_layers(cfg):
        cannot_test(f"no cgroup can be made here for the {mode} mode")
    return cfg


@pytest.fixture(scope="session", autouse=True)
def _reaper() -> None:
    # What the runner's worker does once: adopt the orphans of killed sandboxes.
    sandbox.adopt_orphans()


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Shadow the project-wide Django fixture: these tests run without pytest-django."""
    yield


@dataclass
class Outcome:
    frames: list[dict]
    returncode: int | None
    elapsed: float
    timed_out: bool
    clean: bool
    stderr: str
    launch: sandbox.Launch
    job_timeout: float
    reports: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reports = [f["value"] for f in self.frames if f.get("type") == "report"]

    def first(self, kind: str) -> dict | None:
        return next((f for f in self.frames if f.get("type") == kind), None)

    @property
    def ready(self) -> dict | None:
        return self.first("ready")

    @property
    def done(self) -> bool:
        return self.first("done") is not None

    @property
    def raised(self) -> dict | None:
        return self.first("raised")

    def describe(self) -> str:
        return (
            f"rc={self.returncode} timed_out={self.timed_out} elapsed={self.elapsed:.2f}s "
            f"frames={self.frames!r} stderr={self.stderr[-800:]!r}"
        )


def _parse(buf: bytearray, frames: list[dict]) -> None:
    while len(buf) >= 4:
        size = int.from_bytes(buf[:4], "big")
        if len(buf) < 4 + size:
            return
        frames.append(json.loads(bytes(buf[4 : 4 + size])))
        del buf[: 4 + size]


def run_code(
    runtime_dir: str,
    code: str,
    *,
    config: sandbox.SandboxConfig,
    timeout_s: float = 1.0,
    limits: dict | None = None,
) -> Outcome:
    """Run `code` in a sandboxed child the way the runner does; the parent owns the clock."""
    parent, child = socket.socketpair()
    fd = child.fileno()
    start = time.monotonic()
    launch = sandbox.prepare(
        runtime_dir, "child_main.py", [str(fd)], timeout_s=timeout_s, config=config
    )
    proc = launch.popen(
        pass_fds=(fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    child.close()
    frames: list[dict] = []
    timed_out = False
    try:
        if limits is None:
            limits = launch.limits
        job = json.dumps({"limits": limits, "code": code})
        body = job.encode("utf-8")
        try:
            parent.sendall(len(body).to_bytes(4, "big") + body)
        except OSError:
            pass  # the child died before reading: the outcome says so
        buf = bytearray()
        deadline = start + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            readable, _, _ = select.select([parent], [], [], min(remaining, 0.05))
            if readable:
                chunk = parent.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
                _parse(buf, frames)
            elif proc.poll() is not None:
                break  # the child is gone; a straggler may still hold the socket open
    finally:
        if not timed_out:
            # As the runner does: a child whose channel closed gets a moment to exit on
            # its own, so its real exit status is read rather than our SIGKILL's.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
        clean = sandbox.kill(proc, launch)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            err = b"<stderr still open after kill()>"
        parent.close()
    return Outcome(
        frames=frames,
        returncode=proc.returncode,
        elapsed=time.monotonic() - start,
        timed_out=timed_out,
        clean=clean,
        stderr=(err or b"").decode("utf-8", "replace"),
        launch=launch,
        job_timeout=timeout_s,
    )


PF_EXITING = 0x4  # the kernel's flag for a task already inside exit()


def _exiting(pid: str) -> bool:
    """Whether the process is already dying: killed, inside exit(), running no code of its
    own. It leaves its cgroup there, before it is a zombie, so a check that waited for its
    cgroup to empty can return while it still shows as running."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            after_name = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True
    return bool(int(after_name[6]) & PF_EXITING)


def uid_processes(uid: int = TEST_UID) -> list[tuple[int, str, str]]:
    """(pid, state, name) of every live process of `uid` on the host: neither a zombie nor
    already inside exit()."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
        except OSError:
            continue
        state = fields.get("State", "").strip()
        if int(fields["Uid"].split()[0]) == uid and not state.startswith("Z"):
            if not _exiting(entry):
                found.append((int(entry), state, fields.get("Name", "").strip()))
    return found


def zombie_children(uid: int = TEST_UID) -> list[int]:
    """Zombies of `uid` whose parent is this process (orphans it adopted as subreaper)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                text = fh.read()
        except OSError:
            continue
        mine = f"PPid:\t{os.getpid()}\n" in text and "State:\tZ" in text
        if mine and f"Uid:\t{uid}\t" in text:
            found.append(int(entry))
    return found


def reap_zombie_children(uid: int = TEST_UID) -> None:
    """Reap what a killed stand-in worker left to us (its orphans came to this subreaper)."""
    for pid in zombie_children(uid):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def assert_nothing_left(uid: int = TEST_UID, wait_s: float = 0.0) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        left = uid_processes(uid)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    assert not left, f"processes of sandbox uid {uid} still running: {left}"


@pytest.fixture(scope="session")
def runtime_dir() -> Iterator[str]:
    """A runtime folder with the stand-in child script and the real skynet package.

    Under /tmp with mode 755: the sandbox uid has to be able to read it (bwrap opens its
    bind sources as that uid).
    """
    path = tempfile.mkdtemp(prefix="skynet-sandbox-test-", dir="/tmp")
    os.chmod(path, 0o755)
    shutil.copy(HERE / "child_main.py", os.path.join(path, "child_main.py"))
    os.chmod(os.path.join(path, "child_main.py"), 0o644)
    os.symlink(RUNTIME_PACKAGE, os.path.join(path, "skynet"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    assert_nothing_left()
    yield
    assert_nothing_left()


def requires_root() -> None:
    if not IS_ROOT:
        cannot_test("the sandbox switches to an unprivileged uid only when the runner is root")


def requires_bwrap() -> None:
    requires_root()
    missing = sandbox.availability(bwrap_config())
    if missing is not None:
        cannot_test(f"the bubblewrap sandbox is unavailable here ({missing})")
