"""Each case out of its siblings' reach: what a case process does first, after its fork.

The cases of a sandbox are processes forked from one warm process (skynet_warm), as one
uid. By the kernel's same-user rules one case could then open a sibling's /proc/PID/mem
(read the expected value it was given, rewrite the feedback it is about to return), its
environ and its descriptors, or signal it. `enter()` closes that in the case process,
before it says it is ready and so before any user code:

* not dumpable (PR_SET_DUMPABLE 0): another process may open the /proc/PID/mem, environ,
  maps, fd/, cwd or root of a process that is not dumpable only with CAP_SYS_PTRACE over
  it, and no case holds a capability. Any kernel.
* where the kernel has Landlock ABI 6 (Linux 6.12), a Landlock domain of the case's own
  that scopes signals (LANDLOCK_SCOPE_SIGNAL): kill, tgkill, pidfd_send_signal and SIGIO
  reach only the case and what it starts, never a sibling nor the warm process. The
  domain also refuses every ptrace-type access from one case to another (/proc/PID/mem
  included, even of a program a case ran, which exec made dumpable again): a second wall.
  Where the kernel has no ABI 6 the sandbox does not claim the layer "cases_apart"; the
  first wall still holds.

What else one process can do to another of its uid, set another's limits (prlimit) or its
scheduling, the syscall filter refuses (sandbox.seccomp). Stdlib only.
"""

from __future__ import annotations

import ctypes
import os

from skynet import _noexec

SIGNAL_SCOPE_ABI = 6

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_LANDLOCK_SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    """struct landlock_ruleset_attr as of ABI 6: no file or network right handled, only
    the scope."""

    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def can_scope_signals(libc: ctypes.CDLL) -> bool:
    """Whether this kernel's Landlock can keep a process's signals within its domain."""
    return _noexec.landlock_abi(libc) >= SIGNAL_SCOPE_ABI


def signal_ruleset(libc: ctypes.CDLL) -> int:
    """A new Landlock ruleset that scopes signals (its descriptor); OSError when the
    kernel refuses it. The warm process makes one before it forks any case: each
    landlock_restrict_self() makes a domain of its own from it, and making it in every
    case would cost each one a third of a millisecond more."""
    attr = _RulesetAttr(0, 0, _LANDLOCK_SCOPE_SIGNAL)
    return _noexec.create_ruleset(libc, attr, "landlock_create_ruleset (signal scope)")


def enter(libc: ctypes.CDLL, ruleset: int | None) -> None:
    """Make this (just forked) case process unreachable by its siblings, for good:
    not dumpable, and with `ruleset` (a signal_ruleset(), closed here) in a domain of
    its own; None where the kernel cannot scope signals. OSError when a wall could not
    be set up (the case must then not run)."""
    if libc.prctl(_PR_SET_DUMPABLE, ctypes.c_ulong(0), 0, 0, 0) != 0:
        raise _noexec.syscall_error("PR_SET_DUMPABLE")
    if libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError("still dumpable")
    if ruleset is None:
        return
    try:
        # no_new_privs is already set (skynet._confine.apply), as Landlock requires.
        _noexec.restrict_self(libc, ruleset, "landlock_restrict_self (signal scope)")
    finally:
        os.close(ruleset)


# --- self-test probe (sandbox.self_test, through skynet._confine) ---


def _reaches(pid: int, scope_signals: bool) -> bool:
    """Whether this process can open `pid`'s memory or, where signals are scoped, signal
    it (signal 0: the permission check alone)."""
    try:
        with open(f"/proc/{pid}/mem", "rb"):
            return True
    except OSError:
        pass
    if not scope_signals:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def probe(libc: ctypes.CDLL, *, scope_signals: bool) -> bool:
    """Two cases forked from this process as a warm sandbox forks them, each entering its
    walls: True when the second can neither open the first's memory nor, with
    `scope_signals`, signal it."""
    ruleset = signal_ruleset(libc) if scope_signals else None
    entered_r, entered_w = os.pipe()
    hold_r, hold_w = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(entered_r)
        os.close(hold_w)
        try:
            enter(libc, ruleset)
            os.write(entered_w, b"y")
            os.read(hold_r, 1)  # until the parent lets go: the prober is done
        finally:
            os._exit(0)
    os.close(entered_w)
    os.close(hold_r)
    verdict_r, verdict_w = os.pipe()
    try:
        if os.read(entered_r, 1) != b"y":
            return False
        second = os.fork()
        if second == 0:
            os.close(hold_w)
            os.close(verdict_r)
            try:
                enter(libc, ruleset)
                os.write(verdict_w, b"n" if _reaches(first, scope_signals) else b"y")
            finally:
                os._exit(0)
        os.close(verdict_w)
        verdict_w = -1
        held = os.read(verdict_r, 1) == b"y"
        os.waitpid(second, 0)
        return held
    finally:
        for fd in (entered_r, hold_w, verdict_r, verdict_w, -1 if ruleset is None else ruleset):
            if fd >= 0:
                os.close(fd)
        os.waitpid(first, 0)
