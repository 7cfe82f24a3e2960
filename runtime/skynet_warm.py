"""A warm sandbox: confined once, the runtime imported, then one fresh process per case.

Started by contract.warm inside bubblewrap (or unconfined) with its control socket as
argv[1]. It applies the confinement the job frame names before anything else, imports all
a case needs, says "ready" and waits. No user code ever runs in this process: each case
frame comes with the case's own socket and stdout/stderr pipes (SCM_RIGHTS), and the
process forks a child for it, which starts from this same clean, warm state, waits for its
job, speaks the case protocol (skynet_child.run_case) on its socket and ends with
os._exit.

Frames on the control socket:

    parent -> sandbox  {"type": "warm", "limits"}              the first, once
    sandbox -> parent  {"type": "ready", "layers"} | {"type": "fatal", "reason"}
    parent -> sandbox  {"type": "case", "index"}  + 3 descriptors: fork a case process
    parent -> sandbox  {"type": "kill", "index"}                a case past its time
    sandbox -> parent  {"type": "exited", "index", "code" | "signal"}

and on a case's own socket:

    case -> parent     {"type": "ready", "layers"}              at once, after the fork
    parent -> case     {"type": "case_job", "job", "cpu_seconds"}   when the check comes

so the worker forks a check's case processes ahead of time, and a check's critical path
holds no fork: its jobs go straight to processes that are already waiting.

This process is not dumpable, so a case child, although it runs as the same user, can
neither read nor write its memory (/proc/PID/mem). Each case child, first thing after its
fork, is set apart from its siblings (skynet._apart): not dumpable either, and where the
kernel scopes signals in a Landlock domain of its own, so that it can neither read nor
rewrite another case's memory nor signal another case or this process. A case can only
ruin itself. After the check the worker kills the whole sandbox; nothing of it is used
again.
"""

from __future__ import annotations

import ctypes
import gc
import os
import resource
import signal
import socket
import sys

import skynet_child

from skynet import _apart, _confine, _memory, _serving, wire

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_EXIT_INTERNAL = 70
_FDS_PER_CASE = 3


# Loaded once here: each case process calls into it, and a new handle per case would
# load and look it up again in every one.
_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)


# A process whose address-space limit is below this imports nothing ahead of its cases:
# numpy alone maps ~100 MB (OpenBLAS's buffer and code), and OpenBLAS ends the process
# when it cannot, where a case would say why.
PRELOAD_MIN_MB = 256


def _use_site() -> None:
    """Make what a case may import the staged libraries and the standard library: the
    stage (limits["site"]) right after the standard library, and the interpreter's own
    site-packages dropped, so the set is the documented one on every machine, not what
    the host's python3 happens to have."""
    kept = [p for p in sys.path if not p.rstrip("/").endswith(("site-packages", "dist-packages"))]
    if _confine.site and _confine.site not in kept:
        kept.append(_confine.site)
    sys.path[:] = kept


def preload(names: list, site: str | None) -> None:
    """Import the common libraries once, before any case is forked, so a metric that
    imports them pays nothing per case. No user code runs here; one that does not import
    is left for the case to report, from a clean slate. The zygote does this once for
    every sandbox it forks (then the modules are already here), else each warm sandbox,
    confined."""
    if not site or not names:
        return
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft < PRELOAD_MIN_MB << 20:
        return
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            continue
        try:
            __import__(name)
        except BaseException:  # noqa: B036 - the case says why, in its own words
            # What did load of it would be found half set up by the case's own import.
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[loaded]


def _preload_dspy() -> None:
    """Import dspy here once, confined, so that every case forked for a DSPy program's
    run starts with it loaded. No user code runs here; a dspy that does not import is left
    for each case to report ("dspy_unavailable")."""
    try:
        from skynet import _dspy_program

        _dspy_program.preload()
    except BaseException:  # noqa: B036 - the case says why, in its own words
        pass


def _recv_frame(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """One frame and the descriptors that came with its first byte."""
    frame, ancillary = wire.recv_with_ancillary(
        sock, socket.CMSG_SPACE(_FDS_PER_CASE * 4), limit=wire.MAX_JOB_FRAME
    )
    return frame, wire.descriptors(ancillary)


def _case_child(
    control: socket.socket,
    frame: dict,
    fds: list[int],
    layers: list[str],
    wake: tuple,
    ruleset: int | None,
) -> None:
    """In the forked process: become the case, then end."""
    code = 0
    try:
        case_fd, out_fd, err_fd = fds
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        # Before it answers, so before any user code: out of its siblings' reach, and
        # they out of its (or the case fails as internal, never runs unwalled).
        _apart.enter(_libc, ruleset)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wake:
            os.close(fd)
        control.close()
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.close(out_fd)
        os.close(err_fd)
        # argv[1] names the case's own socket, as it names the control socket here.
        sys.argv[1:] = [str(case_fd)]
        sock = socket.socket(fileno=case_fd)
        wire.send(sock, {"type": "ready", "layers": layers})
        # Forked ahead of the check, the process waits here for its case: the job
        # arrives on its own socket, straight from the worker.
        job = wire.recv(sock, limit=wire.MAX_JOB_FRAME)
        if job is None or job.get("type") != "case_job":
            os._exit(0)
        seconds = int(job.get("cpu_seconds") or 0)
        if seconds > 0:
            _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
            limit = seconds if hard == resource.RLIM_INFINITY else min(seconds, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
        skynet_child.run_case(sock, job["job"])
    except BaseException:  # noqa: B036 - our own failure: tell the parent, never pass silently
        code = _EXIT_INTERNAL
        try:
            wire.send(socket.socket(fileno=fds[0]), {"type": "fatal", "reason": "internal"})
        except BaseException:  # noqa: B036
            pass
    os._exit(code)


def serve(control: socket.socket, layers: list[str], ruleset: int | None) -> None:
    children: dict[int, int] = {}  # pid -> case index

    def handle(frame: dict, fds: list[int], wake: tuple[int, int]) -> None:
        if frame["type"] == "case" and len(fds) == _FDS_PER_CASE:
            pid = os.fork()
            if pid == 0:
                _case_child(control, frame, fds, layers, wake, ruleset)
            children[pid] = frame["index"]
        elif frame["type"] == "kill":
            for pid, index in list(children.items()):
                if index == frame.get("index"):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass

    def exited(pid: int, status: int) -> None:
        index = children.pop(pid, None)
        if index is not None:
            wire.send(control, {"type": "exited", "index": index, **_serving.exit_report(status)})

    _serving.serve(control, _recv_frame, handle, exited)


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[1]))
    try:
        job = wire.recv(control, limit=wire.MAX_JOB_FRAME)
        if job is None or job.get("type") != "warm":
            raise wire.ProtocolError("bad_job")
        try:
            layers = [str(layer) for layer in _confine.apply(job.get("limits") or {})]
        except BaseException:  # noqa: B036 - never run user code unconfined
            wire.send(control, {"type": "fatal", "reason": "confine_failed"})
            os._exit(_EXIT_INTERNAL)
        _use_site()
        if _confine.site:
            # Where a process is too small for numpy, importing it says so (skynet._memory).
            _memory.install(PRELOAD_MIN_MB << 20)
        preload((job.get("limits") or {}).get("preload") or [], _confine.site)
        if job.get("preload") == "dspy":
            _preload_dspy()
        # Each case enters a Landlock domain of its own made from this one ruleset.
        ruleset = _apart.signal_ruleset(_libc) if "cases_apart" in layers else None
        # Case children run as the same user: without this they could open our memory.
        _prctl(_PR_SET_DUMPABLE, 0)
        # Nothing allocated so far is garbage: keep the collector off these pages, so each
        # forked case does not copy them when it first runs.
        gc.freeze()
        wire.send(control, {"type": "ready", "layers": layers})
        serve(control, layers, ruleset)
    except BaseException:  # noqa: B036
        try:
            wire.send(control, {"type": "fatal", "reason": "internal"})
        except BaseException:  # noqa: B036
            pass
        os._exit(_EXIT_INTERNAL)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
