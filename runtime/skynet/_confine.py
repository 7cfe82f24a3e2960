"""Confinement applied inside the child process, before any user code is imported.

The parent (sandbox) decides *where* the child runs: bubblewrap namespaces, an
unprivileged uid, a scrubbed environment. This module does the part only the process itself
can do, and it must run first in the child::

    layers = skynet._confine.apply(job["limits"])

`limits` is the dict built by `sandbox.limits_for()`; every key is optional so a
hand-built dict still works (missing keys take the defaults below). `apply()` returns the
layers that hold, in the stable order of `LAYERS`, and raises `ConfinementError` when a
layer named in `limits["required"]` could not be set up, so a check never runs with less
confinement than the parent announced (fail closed).

Stdlib only. The syscall filter is built by the worker (sandbox.seccomp) and
apply() loads its BPF program from `limits["seccomp_bpf"]`, in every mode, once the
sandbox's noexec mounts are made and its capabilities given up (skynet._noexec), and before
any user code. Nothing is imported to get it, so no file the sandbox cannot read can turn
it off.

Running this file as a script (`python skynet/_confine.py FD`) is the probe used by
`sandbox.self_test()`: it reads one job frame from the socket FD, applies the
limits, probes the walls and writes one result frame back.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

# Stable layer codes, shared with sandbox (which adds "namespaces").
LAYERS = (
    "namespaces",
    "noexec",
    "unprivileged_uid",
    "seccomp",
    "landlock",
    "cases_apart",
    "rlimits",
    "cgroup",
    "pdeathsig",
    "clean_env",
)

DEFAULTS: dict = {
    "memory_mb": 512,
    "cpu_seconds": 61,
    "file_size_bytes": 1 << 20,
    "open_files": 64,
    "max_processes": 64,
    "core_bytes": 0,
    "uid": None,
    "gid": None,
    # "load" (seccomp_bpf), or None.
    "seccomp": None,
    "seccomp_bpf": None,
    # The writable mounts that must be noexec; "mount_noexec": this process makes them so
    # itself, with the capabilities it was started with for that alone (skynet._noexec).
    "noexec": (),
    "mount_noexec": False,
    # Where execve may find programs (Landlock), or None: no Landlock.
    "exec_paths": None,
    # Every case this process forks gets a Landlock domain of its own that scopes its
    # signals (skynet._apart); apply() only proves the kernel can make one.
    "cases_apart": False,
    "subreaper": False,
    "env_keys": None,
    "required": (),
}

# Plain numbers rather than `import signal, socket`: those pull in enum and cost a few
# milliseconds of every check's start-up. The values are fixed by the Linux ABI.
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_SIGKILL = 9
_AF_UNIX = 1

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class ConfinementError(RuntimeError):
    """A layer the parent requires could not be set up; user code must not run."""


# Where this sandbox holds the packages a DSPy program imports (limits["site"]).
site: str | None = None


def apply(limits: dict) -> list[str]:
    """Apply limits to the current process; return the names of the layers that hold."""
    # Imported here: run as a script (the self-test), this file finds the skynet package
    # only once __main__ has put the runtime folder on sys.path.
    from skynet import _apart, _noexec

    cfg = {**DEFAULTS, **(limits or {})}
    global site
    site = cfg.get("site") if isinstance(cfg.get("site"), str) else None
    held: set[str] = set()
    errors: dict[str, str] = {}
    libc = ctypes.CDLL(None, use_errno=True)

    # First, so that from here on the worker dying takes this process with it.
    if _prctl(libc, _PR_SET_PDEATHSIG, _SIGKILL):
        held.add("pdeathsig")
    else:
        errors["pdeathsig"] = os.strerror(ctypes.get_errno())

    if cfg.get("mount_noexec"):
        # Before anything else runs with them: the capabilities bwrap left this process for
        # its noexec mounts, used and then given up (or nothing runs at all).
        try:
            _noexec.make_noexec(libc, cfg.get("noexec") or ())
        except OSError as exc:
            errors["noexec"] = str(exc)
        try:
            _noexec.drop_capabilities(libc)
        except OSError as exc:
            raise ConfinementError(f"capabilities not given up: {exc}") from None
    writable = cfg.get("noexec") or ()
    if writable and "noexec" not in errors:
        unmarked = [path for path in writable if not _noexec.is_noexec(path)]
        if unmarked:
            errors["noexec"] = "not mounted noexec: " + ", ".join(unmarked)
        else:
            held.add("noexec")

    if cfg.get("subreaper"):
        # Without a pid namespace: orphaned descendants (double fork + setsid) come to us
        # rather than to the host's init, so the parent still finds them in our tree while
        # we live. Not under bwrap, where a pid namespace's whole content dies with it.
        _prctl(libc, _PR_SET_CHILD_SUBREAPER, 1)

    try:
        _drop_privileges(cfg.get("uid"), cfg.get("gid"))
        if _runs_unprivileged():
            held.add("unprivileged_uid")
        else:
            errors["unprivileged_uid"] = "a uid or gid is 0, or capabilities are held"
    except OSError as exc:
        errors["unprivileged_uid"] = str(exc)

    try:
        _set_rlimits(cfg)
        held.add("rlimits")
    except (OSError, ValueError) as exc:
        errors["rlimits"] = str(exc)

    # no_new_privs: setuid binaries can no longer raise privileges; also what lets an
    # unprivileged process load a seccomp filter at all (bwrap sets it too).
    nnp = _prctl(libc, _PR_SET_NO_NEW_PRIVS, 1)
    exec_paths = cfg.get("exec_paths")
    if exec_paths is not None:
        try:
            if not nnp:
                raise OSError("PR_SET_NO_NEW_PRIVS failed")
            _noexec.restrict_exec(libc, exec_paths)
            held.add("landlock")
        except OSError as exc:
            errors["landlock"] = str(exc)
    if cfg.get("cases_apart"):
        try:
            if not nnp:
                raise OSError("PR_SET_NO_NEW_PRIVS failed")
            os.close(_apart.signal_ruleset(libc))
            held.add("cases_apart")
        except OSError as exc:
            errors["cases_apart"] = str(exc)
    if cfg.get("seccomp") == "load":
        try:
            if not nnp:
                raise OSError("PR_SET_NO_NEW_PRIVS failed")
            _load_filter(libc, cfg.get("seccomp_bpf") or "")
            held.add("seccomp")
        except (OSError, ValueError) as exc:
            errors["seccomp"] = str(exc)

    if _scrub_environment(cfg.get("env_keys")):
        held.add("clean_env")
    else:
        errors["clean_env"] = "unexpected environment variables (removed)"

    missing = [name for name in cfg.get("required") or () if name not in held]
    if missing:
        detail = "; ".join(f"{name}: {errors.get(name, 'not set up')}" for name in missing)
        raise ConfinementError(f"required sandbox layers missing: {detail}")
    return [name for name in LAYERS if name in held]


def _prctl(libc: ctypes.CDLL, option: int, arg: int) -> bool:
    return libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0) == 0


def _drop_privileges(uid: int | None, gid: int | None) -> None:
    """Fallback for when the parent could not start us as the sandbox uid already.

    Only acts as root; order matters: groups and gid first, while we still may change them.
    """
    if uid is None or os.geteuid() != 0:
        return
    gid = uid if gid is None else gid
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _runs_unprivileged() -> bool:
    """True when no uid or gid of this process is 0 and it holds no capability (none
    effective, none permitted that it could make effective).

    That the uid is also unprivileged on the host cannot be seen from here: bubblewrap's
    nested user namespace (--disable-userns) maps our uid to 0 of its *intermediate*
    namespace whatever the host uid is. The parent guarantees it by starting bwrap as the
    sandbox uid (setpriv), never as root mapping itself to another uid.
    """
    if 0 in os.getresuid() or 0 in os.getresgid():
        return False
    try:
        with open("/proc/self/status") as fh:
            return not any(
                int(line.split()[1], 16) for line in fh if line.startswith(("CapEff:", "CapPrm:"))
            )
    except (OSError, ValueError):
        pass
    return True


def _set_rlimits(cfg: dict) -> None:
    mb = 1024 * 1024
    cpu = int(cfg["cpu_seconds"])
    wanted = [
        (resource.RLIMIT_AS, int(cfg["memory_mb"]) * mb, int(cfg["memory_mb"]) * mb),
        # SIGXCPU at the soft limit, SIGKILL one second later should the handler hang on.
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        # Python ignores SIGXFSZ, so a too-large write raises OSError(EFBIG) instead.
        (resource.RLIMIT_FSIZE, int(cfg["file_size_bytes"]), int(cfg["file_size_bytes"])),
        (resource.RLIMIT_NOFILE, int(cfg["open_files"]), int(cfg["open_files"])),
        (resource.RLIMIT_NPROC, int(cfg["max_processes"]), int(cfg["max_processes"])),
        (resource.RLIMIT_CORE, int(cfg["core_bytes"]), int(cfg["core_bytes"])),
    ]
    for which, soft, hard in wanted:
        cur_soft, cur_hard = resource.getrlimit(which)
        # Never try to raise a hard limit we were given (that would fail unprivileged).
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))


def _scrub_environment(allowed: list[str] | tuple[str, ...] | None) -> bool:
    """Remove any variable the parent did not put there; report whether it was clean."""
    if allowed is None:
        return True
    extra = [key for key in os.environ if key not in set(allowed)]
    for key in extra:
        del os.environ[key]
    return not extra


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _load_filter(libc: ctypes.CDLL, encoded: str) -> None:
    """Install the worker's BPF program (base64 of struct sock_filter[]) on this process."""
    import binascii

    program = binascii.a2b_base64(encoded)
    if not program or len(program) % 8:
        raise ValueError("no seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


# --- self-test probe (sandbox.self_test runs this file as the child script) ---


def _fails(action) -> bool:
    try:
        action()
    except Exception:
        return True
    return False


def _probe(job: dict, layers: list[str]) -> dict:
    import socket

    probe = job.get("probe") or {}
    secret = probe.get("secret") or "\0never"

    def connect() -> None:
        socket.create_connection(("127.0.0.1", int(probe["port"])), timeout=1).close()

    def connect_abstract() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1)
            sock.connect("\0" + str(probe.get("abstract") or "skynet-none"))

    def read(path: str):
        def action() -> None:
            with open(path, "rb") as fh:
                fh.read(1)

        return action

    def secret_leaks() -> bool:
        if any(secret in value for value in os.environ.values()):
            return True
        for path in ("/proc/self/environ", "/proc/1/environ", f"/proc/{os.getppid()}/environ"):
            try:
                with open(path, "rb") as fh:
                    if secret.encode() in fh.read():
                        return True
            except OSError:
                pass
        return False

    def write_root() -> None:
        with open("/skynet-sandbox-probe", "w") as fh:
            fh.write("x")

    from skynet import _apart, _noexec

    project_file = probe.get("project_file") or "/etc/shadow"
    host_pid = int(probe.get("host_pid") or 0)
    libc = ctypes.CDLL(None, use_errno=True)
    return {
        **_noexec.probes(),
        "siblings_out_of_reach": _apart.probe(libc, scope_signals="cases_apart" in layers),
        "network_blocked": _fails(connect),
        "abstract_socket_unreachable": _fails(connect_abstract),
        "shadow_unreadable": _fails(read("/etc/shadow")),
        "secrets_absent": not secret_leaks(),
        "project_hidden": _fails(read(project_file)),
        "uid_unprivileged": os.getuid() != 0 and os.geteuid() != 0,
        "host_processes_hidden": host_pid > 2 and not os.path.exists(f"/proc/{host_pid}"),
        "root_readonly": _fails(write_root),
    }


def _main(argv: list[str]) -> int:
    # Imported here, not at the top: run as a script, this file finds the skynet package only
    # once __main__ has put the runtime folder on sys.path, and apply()'s importers need
    # neither. wire (stdlib-only) is the framing the parent speaks.
    import socket

    from skynet import wire

    sock = socket.socket(fileno=int(argv[1]))
    job = wire.recv(sock, limit=wire.MAX_JOB_FRAME)
    if job is None:
        raise EOFError("job socket closed")
    reply: dict = {"type": "selftest"}
    try:
        reply["layers"] = apply(job.get("limits") or {})
    except ConfinementError as exc:
        reply["error"] = str(exc)
        reply["layers"] = []
    reply["probes"] = _probe(job, reply["layers"])
    wire.send(sock, reply)
    return 0


if __name__ == "__main__":
    # Run as a script, sys.path[0] is this package's folder; the skynet package is found
    # from the runtime folder above it.
    sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(_main(sys.argv))
