"""Hostile code in a real sandboxed child: each case ends safely, in time, leaves nothing
running, and the next check runs normally. Every case runs in every mode the code
supports (bubblewrap, and unconfined with one uid per slot), each with a cgroup and with
the rlimit split instead, with the outcome each mode guarantees."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

import sandbox

from .conftest import (
    MODES,
    TEST_UID,
    assert_nothing_left,
    bwrap_config,
    config_for,
    requires_bwrap,
    run_code,
    uid_processes,
    unconfined_config,
)

PROJECT_FILE = str(Path(__file__).resolve().parents[2] / "pyproject.toml")
TIMEOUT = 1.0
# For cases whose expected end comes after real work (filling hundreds of MB of memory or
# of /tmp): they assert how the case ends, not how fast, and on a loaded machine that work
# alone can take more than a second or two.
WORK_TIMEOUT = 10.0
BENIGN = "report(sum(range(10)))"
FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"


@pytest.fixture(params=list(MODES))
def cfg(request) -> sandbox.SandboxConfig:
    return config_for(request.param)


def contained(out, cfg: sandbox.SandboxConfig, runtime_dir: str) -> None:
    """The shared post-conditions of every hostile case."""
    assert out.ready is not None, f"confinement never reported ready: {out.describe()}"
    assert out.elapsed < 3 * out.job_timeout + 3, out.describe()
    assert out.clean, f"kill() reported survivors: {out.describe()}"
    assert_nothing_left()
    after = run_code(runtime_dir, BENIGN, config=cfg)
    assert after.done and after.reports == [45], after.describe()
    assert_nothing_left()


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("while True:\n    pass", id="infinite-loop"),
        pytest.param(
            "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
            id="ignores-sigterm",
        ),
        pytest.param("import time\ntime.sleep(10**6)", id="sleep-forever"),
        pytest.param(FORK_BOMB, id="fork-bomb"),
        pytest.param(
            # A daemon: double fork + setsid, so it is in neither the tree nor the session.
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(10**6)\n"
            "    os._exit(0)\n"
            "report('daemon started')\n"
            "time.sleep(10**6)",
            id="setsid-grandchild-running",
        ),
    ],
)
def test_runaway_is_killed_on_the_wall_clock(runtime_dir, cfg, no_leftovers, code):
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.timed_out, out.describe()
    assert not out.done
    contained(out, cfg, runtime_dir)


def test_daemon_left_behind_after_normal_exit(runtime_dir, cfg, no_leftovers):
    code = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(10**6)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "report('left a daemon')"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done and out.reports == ["left a daemon"], out.describe()
    contained(out, cfg, runtime_dir)


def test_os_exit_ends_the_check(runtime_dir, cfg, no_leftovers):
    out = run_code(runtime_dir, "import os\nos._exit(0)", config=cfg, timeout_s=TIMEOUT)
    assert not out.timed_out and not out.done, out.describe()
    assert out.returncode == 0
    contained(out, cfg, runtime_dir)


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("x = bytearray(8 * 1024**3)", id="one-huge-block"),
        pytest.param(
            "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 * 1024))",
            id="fast-growth",
        ),
        pytest.param(
            "import time\nchunks = []\nwhile True:\n"
            "    chunks.append(b'x' * (4 << 20))\n    time.sleep(0.001)",
            id="slow-growth",
        ),
    ],
)
def test_memory_bomb_raises_memory_error(runtime_dir, cfg, no_leftovers, code):
    out = run_code(runtime_dir, code, config=cfg, timeout_s=WORK_TIMEOUT)
    assert out.raised and out.raised["exc"] == "MemoryError", out.describe()
    contained(out, cfg, runtime_dir)


def test_recursion_bomb(runtime_dir, cfg, no_leftovers):
    plain = run_code(runtime_dir, "def f():\n    f()\nf()", config=cfg, timeout_s=TIMEOUT)
    assert plain.raised and plain.raised["exc"] == "RecursionError", plain.describe()
    # With the limit lifted the C stack overflows: the child dies, the parent does not care.
    deep = run_code(
        runtime_dir,
        "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)",
        config=cfg,
        timeout_s=2.0,
    )
    assert not deep.done, deep.describe()
    contained(deep, cfg, runtime_dir)


def test_secrets_do_not_reach_the_child(runtime_dir, cfg, no_leftovers, monkeypatch):
    planted = {
        "DJANGO_SECRET_KEY": "django-secret-planted-4711",
        "DATABASE_URL": "postgres://admin:planted-pw-4711@db/prod",
        "REDIS_URL": "redis://:planted-redis-4711@cache:6379/0",
        "OPENAI_API_KEY": "sk-planted-4711",
        "SECRET": "plain-secret-4711",
    }
    for key, value in planted.items():
        monkeypatch.setenv(key, value)
    code = (
        "import os\n"
        "report(dict(os.environ))\n"
        "for path in ('/proc/self/environ', '/proc/1/environ', f'/proc/{os.getppid()}/environ'):\n"
        "    try:\n"
        "        report(open(path, 'rb').read().decode('latin-1'))\n"
        "    except OSError as exc:\n"
        "        report(type(exc).__name__)\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done, out.describe()
    env = out.reports[0]
    assert set(env) <= set(sandbox.sandbox_env()) | {"PWD"}
    text = repr(out.reports)
    assert "4711" not in text, "a planted secret reached the sandbox"
    contained(out, cfg, runtime_dir)


def test_host_files_are_out_of_reach(runtime_dir, cfg, no_leftovers):
    code = (
        "import os\n"
        "def attempt(path):\n"
        "    try:\n"
        "        if os.path.isdir(path):\n"
        "            return os.listdir(path)\n"
        "        with open(path, 'rb') as fh:\n"
        "            return fh.read(64).decode('latin-1')\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        f"for path in ('/etc/shadow', '/root', {PROJECT_FILE!r}, '/work/main', '/etc/passwd'):\n"
        "    report([path, attempt(path)])\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done, out.describe()
    seen = dict(out.reports)
    assert seen["/etc/shadow"] in ("PermissionError", "FileNotFoundError"), seen
    assert seen["/root"] in ("PermissionError", "FileNotFoundError"), seen
    if out.launch.mode == "bwrap":
        # Not even there: only /usr, the runtime, /tmp, /proc, /dev are mounted.
        for path in ("/etc/shadow", "/root", PROJECT_FILE, "/work/main", "/etc/passwd"):
            assert seen[path] == "FileNotFoundError", (path, seen[path])
    contained(out, cfg, runtime_dir)


def test_tcp_to_localhost_fails(runtime_dir, cfg, no_leftovers):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = (
            "import socket\n"
            "def attempt(action):\n"
            "    try:\n"
            "        action()\n"
            "        return 'CONNECTED'\n"
            "    except OSError as exc:\n"
            "        return type(exc).__name__\n"
            f"report(attempt(lambda: socket.create_connection(('127.0.0.1', {port}), 1)))\n"
            "report(attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM)))\n"
            "report(attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
            f".sendto(b'x', ('127.0.0.1', {port}))))\n"
            "report(attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)))\n"
            "report(attempt(lambda: socket.socketpair()))\n"
        )
        out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the listener
    assert out.done, out.describe()
    # seccomp answers EACCES for every non-AF_UNIX socket; AF_UNIX pairs still work.
    assert out.reports[:4] == ["PermissionError"] * 4, out.reports
    assert out.reports[4] == "CONNECTED"
    contained(out, cfg, runtime_dir)


def test_network_namespace_holds_without_seccomp(runtime_dir, no_leftovers):
    requires_bwrap()
    cfg = bwrap_config(seccomp=False)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), 1)\n"
            "    report('CONNECTED')\n"
            "except OSError as exc:\n"
            "    report(type(exc).__name__)\n"
        )
        out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert "seccomp" not in out.ready["layers"]
    assert out.done and out.reports[0] != "CONNECTED", out.describe()
    assert out.reports[0] != "PermissionError"  # refused by the empty namespace, not seccomp
    contained(out, cfg, runtime_dir)


def test_writes_outside_tmp_fail(runtime_dir, cfg, no_leftovers):
    code = (
        "import os\n"
        "def attempt(path):\n"
        "    try:\n"
        "        with open(path, 'w') as fh:\n"
        "            fh.write('x')\n"
        "        return 'WROTE'\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "for path in ('/planted', '/usr/planted', '/etc/planted', '/opt/skynet/planted',\n"
        "             '/dev/planted', '/work/main/planted', '/tmp/ok'):\n"
        "    report([path, attempt(path)])\n"
        "try:\n"
        "    with open('/tmp/big', 'wb') as fh:\n"
        "        fh.write(b'x' * (2 << 20))\n"
        "    report('big file written')\n"
        "except OSError as exc:\n"
        "    report(exc.errno)\n"
        "os.unlink('/tmp/ok')\n"
        "os.unlink('/tmp/big')\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done, out.describe()
    results = dict(out.reports[:-1])
    assert results.pop("/tmp/ok") == "WROTE"
    assert all(v != "WROTE" for v in results.values()), results
    assert out.reports[-1] == 27  # EFBIG: RLIMIT_FSIZE, not a killed process
    assert not Path("/work/main/planted").exists()
    contained(out, cfg, runtime_dir)


def test_private_tmp_is_capped_and_fresh(runtime_dir, no_leftovers):
    requires_bwrap()
    cfg = bwrap_config()
    fill = (
        "import errno, os\n"
        "open('/tmp/planted', 'w').write('from the previous check')\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(100):\n"
        "        with open(f'/tmp/fill{i}', 'wb') as fh:\n"
        "            fh.write(b'x' * ((1 << 20) - 1))\n"
        "        written += 1\n"
        "    report(['no cap', written])\n"
        "except OSError as exc:\n"
        "    report([errno.errorcode[exc.errno], written])\n"
    )
    out = run_code(runtime_dir, fill, config=cfg, timeout_s=WORK_TIMEOUT)
    assert out.done, out.describe()
    code, written = out.reports[0]
    assert code == "ENOSPC" and written < 40, out.reports
    nxt = run_code(runtime_dir, "import os\nreport(os.listdir('/tmp'))", config=cfg)
    assert nxt.reports == [[]], "a file planted in /tmp reached the next check"


def test_symlink_planted_in_tmp(runtime_dir, cfg, no_leftovers):
    code = (
        "import os\n"
        "def attempt(target):\n"
        "    link = '/tmp/link'\n"
        "    if os.path.lexists(link):\n"
        "        os.unlink(link)\n"
        "    os.symlink(target, link)\n"
        "    try:\n"
        "        with open(link, 'rb') as fh:\n"
        "            return fh.read(32).decode('latin-1')\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "    finally:\n"
        "        os.unlink(link)\n"
        f"for target in ('/etc/shadow', {PROJECT_FILE!r}, '/proc/1/environ'):\n"
        "    report([target, attempt(target)])\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done, out.describe()
    seen = dict(out.reports)
    assert seen["/etc/shadow"] in ("PermissionError", "FileNotFoundError")
    if out.launch.mode == "bwrap":
        assert seen[PROJECT_FILE] == "FileNotFoundError"
    assert "4711" not in repr(seen)
    contained(out, cfg, runtime_dir)


def test_seccomp_denies_dangerous_syscalls(runtime_dir, cfg, no_leftovers):
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def call(nr, *args):\n"
        "    ctypes.set_errno(0)\n"
        "    rc = libc.syscall(nr, *args)\n"
        "    return rc, ctypes.get_errno()\n"
        "buf = ctypes.create_string_buffer(256)\n"
        "report({\n"
        "    'io_uring_setup': call(425, 8, buf),\n"
        "    'keyctl': call(250, 0, 0),\n"
        "    'ptrace': call(101, 16, os.getppid(), 0, 0),\n"
        "    'unshare': call(272, 0x10000000),\n"
        "    'bpf': call(321, 0, 0, 0),\n"
        "    'clone_newuser': call(56, 0x10000000 | 17, 0, 0, 0, 0),\n"
        "})\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=TIMEOUT)
    assert out.done, out.describe()
    assert "seccomp" in out.ready["layers"]
    for name, (rc, err) in out.reports[0].items():
        assert (rc, err) == (-1, 1), f"{name} was not denied with EPERM: {(rc, err)}"
    contained(out, cfg, runtime_dir)


def test_limits_and_identity_inside(runtime_dir, cfg, no_leftovers):
    code = (
        "import os, resource\n"
        "names = ['RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_NPROC',\n"
        "         'RLIMIT_CORE']\n"
        "report({n: resource.getrlimit(getattr(resource, n)) for n in names})\n"
        "report([os.getresuid(), os.getresgid(), os.getgroups()])\n"
        "report(open('/proc/self/status').read())\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=1.5)
    assert out.done, out.describe()
    limits = out.reports[0]
    if "cgroup" in out.launch.layers:
        # The cgroup bounds the check's processes together; each may use all of it.
        assert limits["RLIMIT_AS"] == [512 << 20, 512 << 20]
        assert limits["RLIMIT_NPROC"] == [64, 64]
    else:
        # No cgroup: the processes together still fit the check's 512 MB.
        per = sandbox.FALLBACK_PROCESSES
        assert limits["RLIMIT_NPROC"] == [per, per]
        assert limits["RLIMIT_AS"] == [(512 // per) << 20, (512 // per) << 20]
    assert limits["RLIMIT_CPU"] == [3, 4]  # ceil(1.5) + 1, hard one above
    assert limits["RLIMIT_FSIZE"] == [1 << 20, 1 << 20]
    assert limits["RLIMIT_NOFILE"] == [64, 64]
    assert limits["RLIMIT_CORE"] == [0, 0]
    uids, gids, groups = out.reports[1]
    assert groups == [] and 0 not in uids and 0 not in gids
    if out.launch.mode == "unconfined":
        assert uids == [TEST_UID] * 3
    status = out.reports[2]
    assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status
    assert "CapEff:\t0000000000000000" in status
    assert set(out.ready["layers"]) == set(out.launch.layers) - {"namespaces", "cgroup"}
    contained(out, cfg, runtime_dir)


def test_fork_bomb_does_not_starve_a_concurrent_check(runtime_dir, no_leftovers):
    """RLIMIT_NPROC is per user namespace: two sandboxes of one shared uid stay apart."""
    requires_bwrap()
    cfg = bwrap_config()  # both checks run as the same uid, as every bwrap sandbox does
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(out=run_code(runtime_dir, FORK_BOMB, config=cfg, timeout_s=6))
    )
    thread.start()
    try:
        time.sleep(1.0)  # let the bomb reach its process limit
        forks = (
            "import os\npids = [os.fork() or os._exit(0) for _ in range(20)]\n"
            "[os.waitpid(p, 0) for p in pids]\nreport(len(pids))"
        )
        # Generous: 64 spinning processes share the CPU with this check.
        fine = run_code(runtime_dir, forks, config=cfg, timeout_s=4.0)
        bomb_still_running = thread.is_alive()
    finally:
        thread.join()
    assert fine.done and fine.reports == [20], fine.describe()
    assert bomb_still_running, "the check only ran after the bomb was gone: no concurrency"
    assert result["out"].timed_out and result["out"].clean
    assert_nothing_left()


AGGREGATE_BOMB = """
import os, select, time
r, w = os.pipe()
for _ in range(6):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(r)
        try:
            block = b"x" * (400 << 20)  # written, so every page is really used
            os.write(w, b"y")
        except MemoryError:
            os.write(w, b"n")
        time.sleep(60)
        os._exit(0)
os.close(w)
held, deadline = 0, time.monotonic() + 4
while time.monotonic() < deadline:
    ready, _, _ = select.select([r], [], [], 0.1)
    if ready:
        chunk = os.read(r, 16)
        if not chunk:
            break
        held += chunk.count(b"y")
report(held)
"""


def test_the_memory_limit_holds_for_all_processes_of_a_check_together(
    runtime_dir, cfg, no_leftovers
):
    """Six processes of 400 MB each: per-process limits alone let them hold 2.4 GB."""
    out = run_code(runtime_dir, AGGREGATE_BOMB, config=cfg, timeout_s=6.0)
    # 512 MB for the whole check: at most one 400 MB block can be held at a time. The
    # kernel may also end the check itself (an out-of-memory kill in its cgroup).
    assert out.reports in ([], [0], [1]), out.describe()
    contained(out, cfg, runtime_dir)


def test_abstract_and_named_unix_sockets_of_the_host_are_out_of_reach(
    runtime_dir, cfg, no_leftovers, tmp_path
):
    name = f"skynet-test-{TEST_UID}-{time.monotonic_ns()}"
    path = tmp_path / "host.sock"
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as abstract,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as named,
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as datagram,
    ):
        abstract.bind("\0" + name)
        abstract.listen(1)
        named.bind(str(path))
        named.listen(1)
        path.chmod(0o777)
        tmp_path.chmod(0o755)
        datagram.bind("\0" + name + "-dgram")
        code = (
            "import socket\n"
            "def attempt(action):\n"
            "    try:\n"
            "        action()\n"
            "        return 'REACHED'\n"
            "    except OSError as exc:\n"
            "        return type(exc).__name__\n"
            "def connect(address):\n"
            "    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    sock.settimeout(1)\n"
            "    sock.connect(address)\n"
            f"report(attempt(lambda: connect('\\0{name}')))\n"
            f"report(attempt(lambda: connect({str(path)!r})))\n"
            "report(attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)"
            f".sendto(b'x', '\\0{name}-dgram')))\n"
            "report(attempt(lambda: socket.socket(socket.AF_UNIX).bind('\\0planted')))\n"
        )
        out = run_code(runtime_dir, code, config=cfg, timeout_s=2.0)
        for listener in (abstract, named, datagram):
            listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            abstract.accept()
        with pytest.raises(BlockingIOError):
            named.accept()
        with pytest.raises(BlockingIOError):
            datagram.recv(16)
    assert out.done, out.describe()
    assert "REACHED" not in out.reports, out.reports
    contained(out, cfg, runtime_dir)


def test_an_orphan_that_clears_the_subreaper_does_not_outlive_the_check(
    runtime_dir, cfg, no_leftovers
):
    code = (
        "import ctypes, os, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "report(libc.prctl(36, 0, 0, 0, 0))\n"  # PR_SET_CHILD_SUBREAPER off: refused
        "report(libc.prctl(1, 0, 0, 0, 0))\n"  # PR_SET_PDEATHSIG cleared: refused
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(10**6)\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\n"
        "report('orphan left')\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=2.0)
    assert out.done and out.reports == [-1, -1, "orphan left"], out.describe()
    contained(out, cfg, runtime_dir)


def test_nothing_written_can_be_made_executable(runtime_dir, cfg, no_leftovers):
    """The filter's part: no file the check writes gets an exec bit, however it asks
    (test_noexec.py: the noexec /tmp, which keeps one from running whatever its mode)."""
    code = (
        "import os, shutil, tempfile\n"
        "def attempt(action):\n"
        "    try:\n"
        "        action()\n"
        "        return 'DONE'\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "work = tempfile.mkdtemp()\n"  # unconfined, /tmp is the host's: a folder of its own
        "tool = os.path.join(work, 'tool')\n"
        "with open(tool, 'w') as fh:\n"
        "    fh.write('#!/bin/sh\\necho ran\\n')\n"
        "report(attempt(lambda: os.chmod(tool, 0o755)))\n"
        "report(attempt(lambda: os.close(os.open(os.path.join(work, 'new'),"
        " os.O_CREAT | os.O_WRONLY, 0o700))))\n"
        "report(attempt(lambda: os.memfd_create('code')))\n"
        "report(attempt(lambda: os.execv(tool, ['tool'])))\n"
        "report(attempt(lambda: shutil.copy('/bin/true', os.path.join(work, 'true'))))\n"
        "report(oct(os.stat(tool).st_mode & 0o777))\n"
        "shutil.rmtree(work)\n"
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=2.0)
    assert out.done, out.describe()
    chmod, create, memfd, run, copy, mode = out.reports
    assert (chmod, create, memfd, run, copy) == ("PermissionError",) * 5, out.reports
    assert int(mode, 8) & 0o111 == 0
    contained(out, cfg, runtime_dir)


VICTIM = (
    "import os, socket, time\n"
    "secret = 'victim-secret-' + 'x' * 32\n"
    "a, b = socket.socketpair()\n"
    "report('ready')\n"
    "time.sleep(1.5)\n"
    "report(secret)\n"
)


def _attack(pid: int) -> str:
    return (
        "import ctypes, os, signal\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def attempt(action):\n"
        "    try:\n"
        "        result = action()\n"
        "        return 'REACHED' if result is None or result >= 0 else 'refused'\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        "def read(path):\n"
        "    with open(path, 'rb') as fh:\n"
        "        fh.read(16)\n"
        f"pid = {pid}\n"
        "report({\n"
        "    'kill': attempt(lambda: os.kill(pid, 0)),\n"
        "    'mem': attempt(lambda: read(f'/proc/{pid}/mem')),\n"
        "    'environ': attempt(lambda: read(f'/proc/{pid}/environ')),\n"
        "    'pidfd_open': attempt(lambda: libc.syscall(434, pid, 0)),\n"
        "    'ptrace': attempt(lambda: libc.syscall(101, 16, pid, 0, 0)),\n"
        "    'process_vm_readv': attempt(lambda: libc.syscall(310, pid, 0, 0, 0, 0, 0)),\n"
        "})\n"
    )


@pytest.mark.parametrize("mode", ["bwrap", "unconfined"])
def test_a_concurrent_check_can_neither_read_nor_forge_another(runtime_dir, mode, no_leftovers):
    """The victim's python process, found from the host, is out of the attacker's reach."""
    victim_cfg = config_for(mode)
    # Unconfined, each slot runs as its own uid (jobs.sandbox_pool); under bwrap all
    # share one and the pid namespaces keep them apart.
    attacker_cfg = victim_cfg if mode == "bwrap" else unconfined_config(uid=TEST_UID - 50)
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.update(
            out=run_code(runtime_dir, VICTIM, config=victim_cfg, timeout_s=4.0)
        )
    )
    thread.start()
    try:
        deadline = time.monotonic() + 3
        victims: list[int] = []
        while not victims and time.monotonic() < deadline:
            victims = [pid for pid, _, name in uid_processes() if name.startswith("python")]
            time.sleep(0.05)
        assert victims, "the victim check never started"
        attack = run_code(runtime_dir, _attack(victims[0]), config=attacker_cfg, timeout_s=2.0)
    finally:
        thread.join()
    assert attack.done, attack.describe()
    assert "REACHED" not in attack.reports[0].values(), attack.reports
    victim = result["out"]
    assert victim.done and victim.reports == ["ready", "victim-secret-" + "x" * 32]
    assert "victim-secret" not in repr(attack.reports)
    assert_nothing_left()
    assert_nothing_left(TEST_UID - 50)
