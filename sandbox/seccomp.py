"""The syscall filter of every sandboxed process, built here, in the worker.

The worker compiles the filter with libseccomp (through pyseccomp) into a classic BPF
program once per process. Under bubblewrap the bytes are handed to bwrap on a file
descriptor (`--seccomp FD`), which installs them right before it starts the interpreter;
unconfined, the child loads the same bytes with prctl() before any user code runs. Either
way the child never imports anything to get its filter, so where the virtualenv lives (or
who may read it) cannot turn the layer off. When the filter cannot be built, no check runs
(SandboxUnavailable "no_seccomp").

What the filter refuses, and why (allow by default; each denial answers an errno, so
Python raises a clean OSError the check can report):

* every socket family but AF_UNIX (EACCES), and on AF_UNIX every way to address a socket:
  connect, bind, listen, accept, sendto with an address, sendmsg. A metric keeps its job
  socket and socketpair(), but can reach no named or abstract socket on the host.
* other processes: ptrace, process_vm_readv/writev, process_madvise, pidfd_open,
  pidfd_getfd, kcmp. A concurrent check's memory and descriptors stay out of reach.
* kernel attack surface with no use in a metric: io_uring (it bypasses seccomp for what it
  queues), keyrings, bpf, perf, userfaultfd, the mount API old and new, namespaces
  (unshare, setns, clone with a CLONE_NEW* flag; clone3 answers ENOSYS so libc falls back
  to clone), chroot, file handles, modules, kexec, swap, reboot, quotas, acct, syslog.
* exec permission bits: no file can be created or chmod-ed with one, no extended
  attribute set or removed (a POSIX ACL sets the mode bits too: setxattr, lsetxattr,
  fsetxattr, setxattrat and the removexattr family), and memfd_create is refused. This
  keeps a file a metric writes from getting an exec bit; what keeps it from running
  whatever its bits (the dynamic loader runs a file that has none) is the noexec /tmp of
  every sandbox with namespaces (skynet._noexec).
* leaving the check: clearing PR_SET_PDEATHSIG or touching PR_SET_CHILD_SUBREAPER.
* another process's limits and scheduling: prlimit64, sched_setaffinity,
  sched_setscheduler, sched_setparam and sched_setattr for any pid but 0 (the caller),
  setpriority and ioprio_set for anyone but the caller itself (which: the process, who:
  0). The kernel asks only for the same uid, which the cases of a sandbox share: one
  could lower a sibling's CPU limit (that kills it as a signal would) or starve it.
  resource.setrlimit and os.nice name the caller as 0 and keep working.

Syscalls of a foreign ABI (i386 via int 0x80, x32) kill the process (libseccomp's bad-arch
action): they would not match the native rules.
"""

from __future__ import annotations

import errno
import functools
import os

from sandbox.errors import SandboxUnavailable

_AF_UNIX = 1
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_SIGKILL = 9
_O_CREAT = 0o100
_O_TMPFILE = 0o20000000  # __O_TMPFILE on x86_64 and aarch64
_EXEC_BITS = (0o100, 0o010, 0o001)

_DENIED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_open",
    "pidfd_getfd",
    "kcmp",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "mknod",
    "mknodat",
    "memfd_create",
    # No metric needs extended attributes set, and one is how an ACL grants exec bits.
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "vhangup",
    # AF_UNIX addressing: the job socket is already connected and socketpair() needs none.
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "sendmsg",
    "sendmmsg",
)

_CLONE_NS_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

# Syscalls whose flags live in memory, out of a filter's reach: answer ENOSYS, which libc
# treats as "use the older call", whose arguments the rules above do see.
_NOT_IMPLEMENTED = {"clone3": None, "openat2": None, "fchmodat2": 452}

# Denied calls newer than some libseccomp (Linux 6.13), known to it by number only (the same
# on x86_64 and aarch64, which share the syscall table from 424 on).
_DENIED_BY_NUMBER = {"setxattrat": 463, "removexattrat": 466}

# Calls on another process (argument 0 its pid) that may name only the caller, as 0.
_OWN_PROCESS_ONLY = (
    "prlimit64",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
)
# setpriority(which, who, ...) and ioprio_set(which, who, ...): `which` must be the
# process kind (PRIO_PROCESS 0, IOPRIO_WHO_PROCESS 1) and `who` 0, the caller.
_OWN_PRIORITY_ONLY = {"setpriority": 0, "ioprio_set": 1}

# Which argument carries the mode, per call that creates a file or changes its mode; and
# for open/openat, which carries the flags.
_MODE_CALLS = {"chmod": 1, "fchmod": 1, "fchmodat": 2, "creat": 1}
_OPEN_CALLS = {"open": (1, 2), "openat": (2, 3)}


def _add(syscall_filter, action, name, *args) -> bool:
    """Add one rule; False when the syscall does not exist on this architecture."""
    try:
        syscall_filter.add_rule(action, name, *args)
    except (OSError, ValueError, RuntimeError):
        return False
    return True


def _rules(sc, syscall_filter) -> None:
    eperm, eacces = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.EACCES)
    # The one rule that must hold: errors propagate, so no filter exists without it.
    for name in ("socket", "socketpair"):
        syscall_filter.add_rule(eacces, name, sc.Arg(0, sc.NE, _AF_UNIX))
    for name in _DENIED:
        _add(syscall_filter, eperm, name)
    for name, number in _DENIED_BY_NUMBER.items():
        if not _add(syscall_filter, eperm, name):
            _add(syscall_filter, eperm, number)
    _add(syscall_filter, eperm, "sendto", sc.Arg(4, sc.NE, 0))
    for flag in _CLONE_NS_FLAGS:
        syscall_filter.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for name, number in _NOT_IMPLEMENTED.items():
        if not _add(syscall_filter, sc.ERRNO(errno.ENOSYS), name) and number is not None:
            # A libseccomp older than the call knows it only by number (same on
            # x86_64 and aarch64, which share the new syscall table).
            _add(syscall_filter, sc.ERRNO(errno.ENOSYS), number)
    for name, mode_arg in _MODE_CALLS.items():
        for bit in _EXEC_BITS:
            _add(syscall_filter, eacces, name, sc.Arg(mode_arg, sc.MASKED_EQ, bit, bit))
    for name, (flags_arg, mode_arg) in _OPEN_CALLS.items():
        for creating in (_O_CREAT, _O_TMPFILE):
            for bit in _EXEC_BITS:
                _add(
                    syscall_filter,
                    eacces,
                    name,
                    sc.Arg(flags_arg, sc.MASKED_EQ, creating, creating),
                    sc.Arg(mode_arg, sc.MASKED_EQ, bit, bit),
                )
    for name in _OWN_PROCESS_ONLY:
        _add(syscall_filter, eperm, name, sc.Arg(0, sc.NE, 0))
    for name, process_kind in _OWN_PRIORITY_ONLY.items():
        _add(syscall_filter, eperm, name, sc.Arg(0, sc.NE, process_kind))
        _add(syscall_filter, eperm, name, sc.Arg(1, sc.NE, 0))
    syscall_filter.add_rule(
        eperm, "prctl", sc.Arg(0, sc.EQ, _PR_SET_PDEATHSIG), sc.Arg(1, sc.NE, _SIGKILL)
    )
    syscall_filter.add_rule(eperm, "prctl", sc.Arg(0, sc.EQ, _PR_SET_CHILD_SUBREAPER))


@functools.lru_cache(maxsize=1)
def _compiled() -> bytes | SandboxUnavailable:
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # pyseccomp loads libseccomp at import
        return SandboxUnavailable("no_seccomp", f"{type(exc).__name__}: {exc}")
    try:
        syscall_filter = sc.SyscallFilter(sc.ALLOW)
        syscall_filter.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        _rules(sc, syscall_filter)
        read, write = os.pipe()
        try:
            with os.fdopen(write, "wb", closefd=False) as stream:
                syscall_filter.export_bpf(stream)
        finally:
            os.close(write)
        with os.fdopen(read, "rb") as stream:
            program = stream.read()
    except Exception as exc:  # libseccomp's errors arrive as OSError or RuntimeError
        return SandboxUnavailable("no_seccomp", f"{type(exc).__name__}: {exc}")
    if not program or len(program) % 8:
        return SandboxUnavailable("no_seccomp", "libseccomp exported no BPF program")
    return program


def bpf_program() -> bytes:
    """The filter as a classic BPF program (struct sock_filter[]); raises
    SandboxUnavailable("no_seccomp") when libseccomp is missing or refuses a rule."""
    program = _compiled()
    if isinstance(program, SandboxUnavailable):
        raise program
    return program


def program_fd() -> int:
    """A new file descriptor holding the program at offset 0, for one bwrap --seccomp.

    One per launch: bwrap reads it to the end, and descriptors shared between launches
    would share that offset. The caller passes it to the child and closes its own copy.
    """
    program = bpf_program()
    fd = os.memfd_create("skynet-seccomp", os.MFD_CLOEXEC)
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
