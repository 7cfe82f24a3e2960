"""Nothing a check writes can be executed: two attacks on that promise, in every mode.

The attacks: a copied program given exec bits through a POSIX ACL (setxattr of
"system.posix_acl_access", which sets the mode bits), and a written file with no exec bit
run through the dynamic loader (`ld.so /tmp/file`, which maps it PROT_EXEC). Under
bubblewrap, in a sandbox of its own and in one the zygote forks, both fail: the filter
refuses the xattr calls, and /tmp is mounted noexec, which refuses the exec and the
loader's mapping whatever the file's mode. Unconfined there is no mount namespace, so no
noexec mount: the ACL is refused all the same, and where the kernel has Landlock nothing
outside the installed folders can be executed, but the loader still runs a written file,
which is what README says of that mode. Either way the metric keeps its /tmp and numpy.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import shutil
import tempfile
import textwrap

import pytest

import sandbox
from contract.cases import DEFAULT_CASES
from contract.engine import run_check
from contract.warm import WarmPool

from .conftest import (
    MODES,
    assert_nothing_left,
    bwrap_config,
    cannot_test,
    config_for,
    requires_bwrap,
    run_code,
)

# What a metric tries, as a function its score() or a stand-in check calls. The memory is
# for numpy: without a cgroup each process gets 1/8 of the check's.
ATTACKS = textwrap.dedent(
    """
    import errno, os, shutil, struct, subprocess, sys, tempfile

    LOADERS = ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")
    # A minimal access ACL, owner rwx, group r-x, other r-x: setting it sets mode 0755.
    ACL = struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", tag, perm, 0xFFFFFFFF) for tag, perm in ((1, 7), (4, 5), (32, 5))
    )

    def outcome(action):
        try:
            return action()
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))

    def run(argv):
        done = subprocess.run(argv, capture_output=True, timeout=10)
        return [done.returncode, done.stderr.decode("utf-8", "replace")[-300:]]

    def writable_exec_mounts():
        top = {}  # a mount covers any listed before it at the same place
        for line in open("/proc/self/mountinfo"):
            top[line.split()[4]] = line.split()[5].split(",")
        return sorted(
            point for point, options in top.items()
            if "ro" not in options and "noexec" not in options and os.path.isdir(point)
        )

    def attacks():
        work = tempfile.mkdtemp()  # unconfined, /tmp is the host's: a folder of its own
        try:
            tool = os.path.join(work, "tool")
            shutil.copyfile("/usr/bin/true", tool)  # the content only: mode 0644
            found = {"xattr": outcome(lambda: os.setxattr(tool, "system.posix_acl_access", ACL))}
            found["mode"] = oct(os.stat(tool).st_mode & 0o777)
            found["exec"] = outcome(lambda: run([tool]))
            loader = next(path for path in LOADERS if os.path.exists(path))
            found["loader"] = outcome(lambda: run([loader, tool]))
            # Through pid 1's root: the sandbox's own, never a mount namespace of bwrap's
            # where /tmp would not be noexec.
            found["loader_via_pid1"] = outcome(lambda: run([loader, "/proc/1/root" + tool]))
            found["exec_via_pid1"] = outcome(lambda: run(["/proc/1/root" + tool]))
            found["writable_exec_mounts"] = writable_exec_mounts()
            # The metric works otherwise: installed programs run, its files are its own,
            # numpy imports.
            found["installed_program"] = outcome(lambda: run(["/usr/bin/true"]))
            with open(os.path.join(work, "notes.txt"), "w") as fh:
                fh.write("kept")
            with open(os.path.join(work, "notes.txt")) as fh:
                found["tmp_file"] = fh.read()
            import numpy
            found["numpy"] = float(numpy.arange(4).sum())
            return found
        finally:
            shutil.rmtree(work, ignore_errors=True)
    """
)

# A stand-in check (tests/sandbox/child_main.py) puts the staged libraries on its path as a
# warm sandbox does (skynet_warm._use_site).
STAND_IN = ATTACKS + (
    "from skynet import _confine\n"
    "if _confine.site:\n"
    "    sys.path.append(_confine.site)\n"
    "report(attacks())\n"
)

METRIC = ATTACKS + (
    "import json\n"
    "def score(input, output, expected=None):\n"
    "    return 1.0, {'feedback': json.dumps(attacks())}\n"
)

REFUSED = ("EACCES", "EPERM")
ONE_CASE = [DEFAULT_CASES[0]]


def _kernel_has_landlock() -> bool:
    """Whether the kernel offers Landlock ABI 2 (Linux 5.19), asked here directly:
    landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION), one number on
    every architecture."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return version >= 2


def _refused_by_loader(result) -> bool:
    """The loader ran and gave up: the kernel refused to map the file executable (or, by
    /proc/1/root of a warm sandbox's pid 1, which is not dumpable, to open it at all)."""
    refusals = ("failed to map segment", "cannot open shared object file: Permission denied")
    return isinstance(result, list) and result[0] != 0 and any(x in result[1] for x in refusals)


def _assert_nothing_written_runs(found: dict) -> None:
    assert found["xattr"] == "EPERM", found
    assert int(found["mode"], 8) & 0o111 == 0, found
    assert found["exec"] in REFUSED, found
    assert _refused_by_loader(found["loader"]), found
    assert _refused_by_loader(found["loader_via_pid1"]), found
    assert found["exec_via_pid1"] in REFUSED, found
    assert found["writable_exec_mounts"] == [], found


def _assert_the_metric_works(found: dict) -> None:
    assert found["installed_program"] == [0, ""], found
    assert found["tmp_file"] == "kept" and found["numpy"] == 6.0, found


@pytest.fixture(params=list(MODES))
def cfg(request) -> sandbox.SandboxConfig:
    return dataclasses.replace(config_for(request.param), memory_mb=1024)


def test_a_written_file_cannot_be_run_by_acl_or_loader(runtime_dir, cfg):
    out = run_code(runtime_dir, STAND_IN, config=cfg, timeout_s=20)
    assert out.done, out.describe()
    (found,) = out.reports
    _assert_the_metric_works(found)
    if out.launch.mode == "bwrap":
        _assert_nothing_written_runs(found)
        assert "noexec" in out.ready["layers"], out.ready
    else:
        # Unconfined (README): the filter refuses the ACL, so the copy never gets exec
        # bits; without a mount namespace nothing stops the loader from mapping it.
        assert "noexec" not in out.ready["layers"], out.ready
        assert found["xattr"] == "EPERM" and found["exec"] in REFUSED, found
        assert int(found["mode"], 8) & 0o111 == 0, found
        assert found["loader"] == [0, ""], found
    assert_nothing_left()


@pytest.mark.parametrize("mode", ["bwrap", "bwrap-rlimits"])
def test_the_noexec_mount_holds_alone(runtime_dir, mode):
    """With the filter and Landlock off, the ACL gives the copy its exec bits, and the
    noexec /tmp alone still refuses to run it, by any path."""
    cfg = dataclasses.replace(config_for(mode), seccomp=False, memory_mb=1024)
    limits = sandbox.limits_for(20, cfg)
    limits.pop("exec_paths", None)
    limits["required"] = [name for name in limits["required"] if name != "landlock"]
    out = run_code(runtime_dir, STAND_IN, config=cfg, timeout_s=20, limits=limits)
    assert out.done, out.describe()
    (found,) = out.reports
    assert found["xattr"] is None and found["mode"] == "0o755", found
    assert found["exec"] in REFUSED and found["exec_via_pid1"] in REFUSED, found
    assert _refused_by_loader(found["loader"]), found
    assert _refused_by_loader(found["loader_via_pid1"]), found
    _assert_the_metric_works(found)
    assert not {"seccomp", "landlock"} & set(out.ready["layers"]), out.ready
    assert_nothing_left()


@pytest.mark.parametrize("mode", ["unconfined", "unconfined-rlimits"])
def test_unconfined_runs_no_program_outside_the_installed_folders(runtime_dir, mode):
    """A program with exec bits that something else wrote (here the test, as root) where
    the check can read it: Landlock refuses to run it where the kernel has it. Without
    Landlock it runs, as README says of that mode."""
    cfg = config_for(mode)
    folder = tempfile.mkdtemp(prefix="skynet-sandbox-test-", dir="/tmp")
    try:
        os.chmod(folder, 0o755)  # every folder above it is searchable: only Landlock refuses
        program = os.path.join(folder, "planted")
        shutil.copyfile("/usr/bin/true", program)
        os.chmod(program, 0o755)
        code = (
            "import errno, subprocess\n"
            "def run(argv):\n"
            "    try:\n"
            "        return subprocess.run(argv).returncode\n"
            "    except OSError as exc:\n"
            "        return errno.errorcode[exc.errno]\n"
            f"readable = len(open({program!r}, 'rb').read()) > 0\n"
            f"report([readable, run([{program!r}]), run(['/usr/bin/true'])])\n"
        )
        out = run_code(runtime_dir, code, config=cfg, timeout_s=5)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert out.done, out.describe()
    readable, planted, installed = out.reports[0]
    assert readable and installed == 0, out.reports
    if _kernel_has_landlock():
        assert planted == "EACCES", out.reports
        assert "landlock" in out.ready["layers"], out.ready
    else:
        assert planted == 0, out.reports
    assert_nothing_left()


def test_without_landlock_a_sandbox_runs_and_says_so(runtime_dir, monkeypatch):
    """A kernel without Landlock (older than 5.19, or with it turned off): the layer is
    missing from the layers the sandbox names, nothing fails for it, and the noexec /tmp
    still keeps a written file from running."""
    requires_bwrap()
    monkeypatch.setattr("skynet._noexec.landlock_abi", lambda libc: 0)
    # A config of its own: what a config gets is decided once and cached.
    cfg = bwrap_config(memory_mb=1024, open_files=63)
    assert "landlock" not in sandbox.active_layers(cfg)
    out = run_code(runtime_dir, STAND_IN, config=cfg, timeout_s=20)
    assert out.done, out.describe()
    assert "landlock" not in out.ready["layers"] and "noexec" in out.ready["layers"]
    (found,) = out.reports
    _assert_nothing_written_runs(found)
    _assert_the_metric_works(found)
    assert_nothing_left()


def test_every_xattr_change_is_refused(runtime_dir, cfg):
    code = (
        "import ctypes, errno, os, tempfile\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "path = os.path.join(tempfile.mkdtemp(), 'file')\n"
        "open(path, 'w').close()\n"
        "fd = os.open(path, os.O_RDONLY)\n"
        "def attempt(action):\n"
        "    try:\n"
        "        action()\n"
        "        return 'DONE'\n"
        "    except OSError as exc:\n"
        "        return errno.errorcode[exc.errno]\n"
        "def call(nr, *args):\n"  # Linux 6.13's *xattrat: one number on every architecture
        "    ctypes.set_errno(0)\n"
        "    libc.syscall(nr, *args)\n"
        "    return errno.errorcode.get(ctypes.get_errno(), 'DONE')\n"
        "name, p = 'user.planted', path.encode()\n"
        "report({\n"
        "    'setxattr': attempt(lambda: os.setxattr(path, name, b'1')),\n"
        "    'lsetxattr': attempt(lambda: os.setxattr(path, name, b'1', follow_symlinks=False)),\n"
        "    'fsetxattr': attempt(lambda: os.setxattr(fd, name, b'1')),\n"
        "    'removexattr': attempt(lambda: os.removexattr(path, name)),\n"
        "    'lremovexattr': attempt(lambda: os.removexattr(path, name, follow_symlinks=False)),\n"
        "    'fremovexattr': attempt(lambda: os.removexattr(fd, name)),\n"
        "    'setxattrat': call(463, -100, p, 0, name.encode(), None, 0),\n"
        "    'removexattrat': call(466, -100, p, 0, name.encode()),\n"
        "})\n"
        "report(os.listxattr(path))\n"  # reading them is harmless and still works
    )
    out = run_code(runtime_dir, code, config=cfg, timeout_s=5)
    assert out.done, out.describe()
    assert out.reports[0] == dict.fromkeys(out.reports[0], "EPERM"), out.reports
    assert out.reports[1] == []
    assert_nothing_left()


def test_the_self_test_probes_the_walls_against_running_what_is_written():
    requires_bwrap()
    report = sandbox.self_test(bwrap_config())
    assert report["available"] and not report.get("error"), report
    assert {"noexec", "seccomp"} <= set(report["layers"]), report
    probes = report["probes"]
    assert probes["xattrs_refused"] and probes["writable_mounts_noexec"], probes
    assert probes["written_file_unrunnable"], probes
    # Landlock is a layer exactly where the kernel has it.
    assert ("landlock" in report["layers"]) == _kernel_has_landlock(), report
    unconfined = sandbox.self_test(config_for("unconfined"))
    assert "noexec" not in unconfined["layers"], unconfined
    assert unconfined["probes"]["xattrs_refused"], unconfined
    # README: unconfined, the loader can still run a written file.
    assert not unconfined["probes"]["written_file_unrunnable"], unconfined


# How a worker's pool makes its sandboxes (tests/sandbox/test_warm.py): forked by the
# zygote (with a cgroup, as for a root worker), or each a bubblewrap of its own.
POOLS = {"zygote": True, "alone": False}


@pytest.fixture(params=sorted(POOLS))
def pool(request):
    requires_bwrap()
    zygote = POOLS[request.param]
    if zygote and not sandbox.zygote_possible(bwrap_config()):
        cannot_test("no cgroup here, so no zygote")
    pool = WarmPool(bwrap_config, size=1, zygote=zygote)
    pool.fill()
    assert pool.wait_ready(60), pool.failure
    assert (pool.zygote is not None) == zygote
    yield pool
    pool.close()
    assert pool.fallbacks == 0
    assert_nothing_left(wait_s=5)


def test_a_metric_cannot_run_what_it_writes_in_a_warm_sandbox(pool):
    result = run_check(METRIC, cases=ONE_CASE, sandboxes=pool, timeout_s=20)
    assert result.passed, result.to_dict()
    found = json.loads(result.cases[0].feedback)
    _assert_nothing_written_runs(found)
    _assert_the_metric_works(found)
    assert "noexec" in result.layers, result.layers
