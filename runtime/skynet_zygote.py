"""The zygote: one warm interpreter that gives each check a sandbox of its own, fast.

Started by contract.zygote inside bubblewrap, with its control socket as argv[1] and two
capabilities that hold only inside bwrap's user namespace (CAP_SYS_ADMIN, to make
namespaces and mounts; CAP_SETPCAP, to drop the bounding set). No user code ever runs in
this process or with those capabilities. Per check sandbox it is asked for, it forks:

    zygote ── C: unshare(mount, pid, ipc, net, uts), then waits for I and reports its end
               └─ I: pid 1 of the new pid namespace; a fresh /proc and a fresh, capped,
                  noexec /tmp; every capability dropped (bounding, ambient, inheritable,
                  permitted, effective) and checked to be gone; then, once the worker
                  has moved it into the check's cgroup, the script's main(argv) runs,
                  in-process, from this warm state (the module is already imported:
                  compiling it again would cost more than the whole fork).

So each check gets new namespaces, a new /tmp, and processes forked from a state in which
no check ever ran; after it the worker kills I, which takes its whole pid namespace with
it. The confinement of the script (uid check, rlimits, seccomp, clean environment) is
then skynet._confine.apply(), as in every other sandbox.

Frames on the zygote's control socket:

    worker -> zygote  {"type": "zygote", "tmp_size"}                 the first, once
    zygote -> worker  {"type": "ready"} | {"type": "fatal", "reason"}
    worker -> zygote  {"type": "spawn", "script", "args"} + 3 descriptors (the check's
                      control socket, its stdout and stderr)

and on the check's own control socket, before the script speaks:

    I -> worker       {"type": "hello"}    the worker reads I's host pid from the socket's
                                           credentials (SO_PASSCRED), joins it to the
                                           check's cgroup, and answers
    worker -> I       {"type": "go"}
    ... the script's own protocol ...
    C -> worker       {"type": "sandbox_exited", "code" | "signal"}   the last frame
"""

from __future__ import annotations

import binascii  # noqa: F401 - skynet._confine decodes the syscall filter with it
import contextlib
import ctypes
import gc
import importlib
import os
import signal
import socket
import sys

import skynet_warm  # imported here once, so each check starts warm

from skynet import _noexec, _serving, wire

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_FRESH = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4

# What bwrap covers read-only in its own /proc; the fresh /proc gets the same.
_PROC_COVERS = ("sys", "sysrq-trigger", "irq", "bus")
_EXIT_INTERNAL = 70
_FDS_PER_SPAWN = 3

_libc = ctypes.CDLL(None, use_errno=True)


class ZygoteError(RuntimeError):
    pass


def _check(result: int, what: str) -> None:
    if result != 0:
        raise ZygoteError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _prctl(option: int, arg: int, arg3: int = 0) -> int:
    return _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(arg3), 0, 0)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    encode = os.fsencode
    _check(
        _libc.mount(
            encode(source),
            encode(target),
            None if fstype is None else encode(fstype),
            ctypes.c_ulong(flags),
            None if data is None else encode(data),
        ),
        f"mount {target}",
    )


def _fresh_filesystems(tmp_size: int) -> None:
    """In I: a /proc of the new pid namespace and an empty /tmp of its own, noexec: the
    only place the check can write, so nothing it writes can be run (skynet._noexec)."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    for name in _PROC_COVERS:
        path = "/proc/" + name
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC, None)
            _mount(path, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, None)
    tmp_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    _mount("tmpfs", "/tmp", "tmpfs", tmp_flags, f"size={tmp_size},mode=0755")
    os.chdir("/tmp")


def _init(control: socket.socket, out_fd: int, err_fd: int, frame: dict, tmp_size: int) -> None:
    """In I, pid 1 of the check's own pid namespace: become the check's sandbox."""
    _check(_prctl(_PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
    _fresh_filesystems(tmp_size)
    _noexec.drop_capabilities(_libc)
    # The same process state as a sandbox bwrap starts: no inherited signal handling.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.close(out_fd)
    os.close(err_fd)
    wire.send(control, {"type": "hello"})
    go = wire.recv(control)
    if go is None or go.get("type") != "go":
        os._exit(0)
    # Its own memory is its own again (the zygote's stays out of reach: another pid ns).
    _prctl(_PR_SET_DUMPABLE, 1)
    name = str(frame["script"]).removesuffix(".py")
    if not name.isidentifier():
        raise ZygoteError(f"not a runtime script: {name!r}")
    script = importlib.import_module(name)
    argv = [script.__file__, str(control.fileno()), *[str(a) for a in frame.get("args") or ()]]
    sys.argv = argv
    gc.unfreeze()
    script.main(argv)
    os._exit(0)


def _spawn(zygote: socket.socket, frame: dict, fds: list[int], tmp_size: int) -> None:
    """In C, the zygote's child: enter the fresh namespaces, start I, report its end."""
    code = _EXIT_INTERNAL
    control = None
    try:
        _check(_prctl(_PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
        zygote.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control_fd, out_fd, err_fd = fds
        control = socket.socket(fileno=control_fd)
        _check(_libc.unshare(_FRESH), "unshare")
        _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
        pid = os.fork()
        if pid == 0:
            try:
                _init(control, out_fd, err_fd, frame, tmp_size)
            except BaseException as exc:  # noqa: B036 - never run the script half set up
                try:
                    wire.send(control, {"type": "fatal", "reason": "confine_failed"})
                    os.write(2, f"zygote: {exc}\n".encode())
                except BaseException:  # noqa: B036
                    pass
            os._exit(_EXIT_INTERNAL)
        os.close(out_fd)
        os.close(err_fd)
        _, status = os.waitpid(pid, 0)
        report = {"type": "sandbox_exited", **_serving.exit_report(status)}
        code = 0
        with contextlib.suppress(OSError):  # the worker closed its end first: the usual end
            wire.send(control, report)
    except BaseException as exc:  # noqa: B036
        try:
            os.write(2, f"zygote: {exc}\n".encode())
            if control is not None:
                wire.send(control, {"type": "fatal", "reason": "confine_failed"})
        except BaseException:  # noqa: B036
            pass
    os._exit(code)


def _recv_spawn(sock: socket.socket) -> tuple[dict | None, list[int]]:
    frame, ancillary = wire.recv_with_ancillary(sock, socket.CMSG_SPACE(_FDS_PER_SPAWN * 4))
    return frame, wire.descriptors(ancillary)


def serve(control: socket.socket, tmp_size: int) -> None:
    def handle(frame: dict, fds: list[int], wake: tuple[int, int]) -> None:
        if frame.get("type") == "spawn" and len(fds) == _FDS_PER_SPAWN and os.fork() == 0:
            for fd in wake:
                os.close(fd)
            _spawn(control, frame, fds, tmp_size)

    # A sandbox's init is reaped here and tells nothing: the sandbox reports its own end.
    _serving.serve(control, _recv_spawn, handle)


def _preload(job: dict) -> None:
    """Import the common scoring libraries (numpy, rapidfuzz) once, from the staged site,
    so every check sandbox forked from here has them loaded: a metric that imports them
    pays nothing, and a sandbox costs no more to make than before (importing them in each
    warm sandbox cost 60-80 ms of CPU, a third of a check's). Trusted code of the
    worker's own install, as the runtime is; no user code runs here."""
    site = job.get("site")
    names = job.get("preload")
    if not isinstance(site, str) or not isinstance(names, list):
        return
    if site not in sys.path:
        sys.path.append(site)
    skynet_warm.preload(names, site)


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[1]))
    try:
        job = wire.recv(control)
        if job is None or job.get("type") != "zygote":
            raise wire.ProtocolError("bad_job")
        _check(_prctl(_PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
        # Check sandboxes run as the same uid: none may open this process's memory.
        _prctl(_PR_SET_DUMPABLE, 0)
        _preload(job)
        gc.freeze()
        wire.send(control, {"type": "ready"})
        serve(control, int(job["tmp_size"]))
    except BaseException as exc:  # noqa: B036
        try:
            os.write(2, f"zygote: {exc}\n".encode())
            wire.send(control, {"type": "fatal", "reason": "internal"})
        except BaseException:  # noqa: B036
            pass
        os._exit(_EXIT_INTERNAL)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
