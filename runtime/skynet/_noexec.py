"""Nothing a check writes can be executed: a noexec /tmp, and Landlock where the kernel has it.

The syscall filter keeps a metric from giving a file an exec bit it asks for, but a file's
mode is not the only way to run it: an ACL can set the bits (the filter refuses the xattr
calls too), and the dynamic loader runs a file with no exec bit at all
(`ld.so /tmp/file` maps it PROT_EXEC). Two mechanisms hold whatever the file's mode:

* ``noexec``: every place a sandbox can write (its /tmp; everything else is read-only) is
  mounted noexec. The kernel then refuses to execve a file there and refuses a PROT_EXEC
  mapping of one, which is what stops the loader. A zygote's check sandbox gets its /tmp
  mounted so by the zygote (runtime/skynet_zygote.py). A sandbox bwrap starts alone gets
  bwrap's /tmp, and bwrap's --tmpfs takes no mount flags: that sandbox's first process
  is started holding CAP_SYS_ADMIN and CAP_SETPCAP inside bwrap's user namespace for
  this alone, and `make_noexec()` gives it a mount namespace of its own with /tmp
  remounted noexec; `drop_capabilities()` then gives up every capability, checked,
  before anything else runs.
* ``landlock``: `restrict_exec()` lets the process and everything it starts execve only
  what lies beneath the installed folders (/usr, the interpreter's own). It does not
  cover mmap, so it cannot stop the loader; it is the only wall against running a file
  by its exec bits where there is no mount namespace (the unconfined mode).

Stdlib only: this runs in the sandbox before any user code.
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24

_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522
_CAP_FIELDS = ("CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:")

# Landlock's syscalls have one number on every architecture (the shared table from 424 on).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_ACCESS_FS_EXECUTE = 1 << 0
_ACCESS_FS_REFER = 1 << 13
# ABI 1 forbids moving a file to another folder outright (no REFER right to grant): a
# metric that renames across folders would fail, so only ABI 2 (Linux 5.19) on is used.
LANDLOCK_MIN_ABI = 2


def syscall_error(what: str) -> OSError:
    """The OSError of the call that just failed (its errno), named by `what`."""
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _keep_flags(path: str) -> int:
    """The mount flags of `path` a remount must repeat: it replaces them all, and in a user
    namespace it may not clear one that was locked (read-only, the atime mode)."""
    flag = os.statvfs(path).f_flag
    kept = MS_RDONLY if flag & os.ST_RDONLY else 0
    if flag & os.ST_NODIRATIME:
        kept |= MS_NODIRATIME
    if flag & os.ST_NOATIME:
        return kept | MS_NOATIME
    return kept | (MS_RELATIME if flag & os.ST_RELATIME else MS_STRICTATIME)


def make_noexec(libc: ctypes.CDLL, paths) -> None:
    """Remount each of `paths` noexec, nosuid and nodev, in a new mount namespace of this
    process's own. Needs CAP_SYS_ADMIN in its user namespace: bwrap's (with
    --disable-userns, a nested one) does not own bwrap's mount namespace, so the change
    is made in a copy this process owns, which is also the only one any process of the
    sandbox is in (bwrap runs it as pid 1: no reaper of bwrap's stays behind in the old
    one for /proc/1/root to lead to)."""
    if libc.unshare(CLONE_NEWNS) != 0:
        raise syscall_error("unshare(CLONE_NEWNS)")
    for path in paths:
        flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC | _keep_flags(path)
        if libc.mount(None, os.fsencode(path), None, ctypes.c_ulong(flags), None) != 0:
            raise syscall_error(f"remount {path} noexec")


def is_noexec(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_NOEXEC)
    except OSError:
        return False


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Give up every capability for good (bounding, ambient, inheritable, permitted,
    effective) and prove it from /proc/self/status; OSError when one is left."""
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        if libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            raise syscall_error(f"drop capability {cap}")
    clear = ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL)
    if libc.prctl(_PR_CAP_AMBIENT, clear, 0, 0, 0) != 0:
        raise syscall_error("clear ambient capabilities")
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise syscall_error("capset")
    with open("/proc/self/status") as fh:
        held = [line for line in fh if line.startswith(_CAP_FIELDS) and int(line.split()[1], 16)]
    if held:
        names = " ".join(line.split()[0] for line in held)
        raise OSError(errno.EPERM, f"capabilities still held: {names}")


def landlock_abi(libc: ctypes.CDLL) -> int:
    """The kernel's Landlock ABI version; 0 where there is none (too old, or turned off)."""
    version = libc.syscall(
        ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def create_ruleset(libc: ctypes.CDLL, attr: ctypes.Structure | ctypes.c_uint64, what: str) -> int:
    """A new Landlock ruleset from `attr` (a struct landlock_ruleset_attr, or its first
    field alone): its descriptor, or OSError named by `what`."""
    ruleset = libc.syscall(
        ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
        ctypes.c_uint32(0),
    )
    if ruleset < 0:
        raise syscall_error(what)
    return ruleset


def restrict_self(libc: ctypes.CDLL, ruleset: int, what: str) -> None:
    """Put this thread (and all it starts) in a new Landlock domain of `ruleset`, for good;
    OSError named by `what`. Needs no_new_privs; the caller closes `ruleset`."""
    restricted = libc.syscall(
        ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)
    )
    if restricted != 0:
        raise syscall_error(what)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        rule = _PathBeneath(access, fd)
        added = libc.syscall(
            ctypes.c_long(_SYS_LANDLOCK_ADD_RULE),
            ctypes.c_int(ruleset),
            ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
        if added != 0:
            raise syscall_error(f"landlock rule for {path}")
    finally:
        os.close(fd)


def restrict_exec(libc: ctypes.CDLL, paths) -> None:
    """Let this process and all it starts execute only files beneath `paths`, for good.

    The ruleset handles only EXECUTE and REFER: reading, writing and the rest stay as the
    other layers leave them. REFER is granted everywhere, so a file can still move between
    folders, but Landlock refuses a move that would give it an execute right it lacked.
    Needs no_new_privs (set by _confine.apply before this).
    """
    abi = landlock_abi(libc)
    if abi < LANDLOCK_MIN_ABI:
        raise OSError(errno.EOPNOTSUPP, f"Landlock ABI {abi}, {LANDLOCK_MIN_ABI} needed")
    handled = ctypes.c_uint64(_ACCESS_FS_EXECUTE | _ACCESS_FS_REFER)
    ruleset = create_ruleset(libc, handled, "landlock_create_ruleset")
    try:
        _allow(libc, ruleset, "/", _ACCESS_FS_REFER)
        for path in paths:
            _allow(libc, ruleset, path, _ACCESS_FS_EXECUTE)
        restrict_self(libc, ruleset, "landlock_restrict_self")
    finally:
        os.close(ruleset)


# --- self-test probes (sandbox.self_test, through skynet._confine) ---

# Where the dynamic loader is, on the architectures the sandbox runs on.
LOADERS = ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")
# A minimal POSIX access ACL (owner rwx, group r-x, other r-x): setting it sets mode 0755.
_ACL_0755 = b"\x02\x00\x00\x00" + b"".join(
    tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + b"\xff\xff\xff\xff"
    for tag, perm in ((0x01, 7), (0x04, 5), (0x20, 5))
)


def _writable_exec_mounts() -> list[str]:
    """Mounted folders this process could write to that allow execution."""
    top: dict[str, list[str]] = {}
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            # Listed after any mount it covers: the zygote's fresh /tmp over bwrap's.
            top[fields[4]] = fields[5].split(",")
    return [
        point
        for point, options in top.items()
        if "ro" not in options and "noexec" not in options and os.path.isdir(point)
    ]


def probes() -> dict:
    """The walls against running what a check writes, tried from inside: True when each
    held. xattrs_refused: an ACL granting exec bits cannot be set on a file written here;
    writable_mounts_noexec: every writable mount is noexec (never unconfined: the host's
    are not); written_file_unrunnable: a copy of a program, written here, does not run
    through the dynamic loader (which only a noexec mount stops)."""
    import shutil
    import subprocess
    import tempfile

    work = tempfile.mkdtemp()
    try:
        copy = os.path.join(work, "true")
        shutil.copyfile("/usr/bin/true", copy)
        try:
            os.setxattr(copy, "system.posix_acl_access", _ACL_0755)
            xattrs_refused = False
        except OSError as exc:
            xattrs_refused = exc.errno == errno.EPERM
        try:
            writable = _writable_exec_mounts()
        except OSError:
            writable = ["?"]
        loader = next((path for path in LOADERS if os.path.exists(path)), None)
        try:
            ran = loader is not None and subprocess.run([loader, copy], timeout=5).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ran = False
        return {
            "xattrs_refused": xattrs_refused,
            "writable_mounts_noexec": not writable,
            "written_file_unrunnable": loader is not None and not ran,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
