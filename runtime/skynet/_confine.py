"""Confinement applied inside the child process, before any user code is imported.

The parent (contract.sandbox) decides *where* the child runs: bubblewrap namespaces, an
unprivileged uid, a scrubbed environment. This module does the part only the process itself
can do, and it must run first in the child::

    layers = skynet._confine.apply(job["limits"])

`limits` is the dict built by `contract.sandbox.limits_for()`; every key is optional so a
hand-built dict still works (missing keys take the defaults below). `apply()` returns the
layers that hold, in the stable order of `LAYERS`, and raises `ConfinementError` when a
layer named in `limits["required"]` could not be set up, so a check never runs with less
confinement than the parent announced (fail closed).

Stdlib only, plus `pyseccomp` (a single ctypes file over libseccomp) when it is importable:
the sandbox bind-mounts it next to this package, or `limits["pyseccomp_path"]` names it.

Running this file as a script (`python skynet/_confine.py FD`) is the probe used by
`contract.sandbox.self_test()`: it reads one job frame from the socket FD, applies the
limits, probes the walls and writes one result frame back.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys

# Stable layer codes, shared with contract.sandbox (which adds "namespaces").
LAYERS = ("namespaces", "unprivileged_uid", "seccomp", "rlimits", "pdeathsig", "clean_env")

DEFAULTS: dict = {
    "memory_mb": 512,
    "cpu_seconds": 61,
    "file_size_bytes": 1 << 20,
    "open_files": 64,
    "max_processes": 64,
    "core_bytes": 0,
    "uid": None,
    "gid": None,
    "seccomp": True,
    "pyseccomp_path": None,
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

# Namespace flags a sandboxed process must not request through clone(): even inside an
# unprivileged user namespace each new namespace is kernel attack surface, and without
# bubblewrap a fresh user+net namespace would hand the child capabilities it never needs.
# (CLONE_NEWTIME is missing on purpose: for clone() its bit is part of the exit-signal byte,
# so it only exists for clone3() and unshare(), both denied outright.)
_CLONE_NS_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

# Syscalls with no use in a test run and a long record of kernel bugs or of reaching out
# of a process: keyrings, io_uring (bypasses seccomp for the ops it queues), tracing other
# processes, BPF, perf, userfaultfd (a common exploit primitive), namespace/mount games.
_DENIED_SYSCALLS = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
)


class ConfinementError(RuntimeError):
    """A layer the parent requires could not be set up; user code must not run."""


def apply(limits: dict) -> list[str]:
    """Apply limits to the current process; return the names of the layers that hold."""
    cfg = {**DEFAULTS, **(limits or {})}
    held: set[str] = set()
    errors: dict[str, str] = {}
    libc = ctypes.CDLL(None, use_errno=True)

    # First, so that from here on the worker dying takes this process with it.
    if _prctl(libc, _PR_SET_PDEATHSIG, _SIGKILL):
        held.add("pdeathsig")
    else:
        errors["pdeathsig"] = os.strerror(ctypes.get_errno())

    if cfg.get("subreaper"):
        # Without a pid namespace: orphaned descendants (double fork + setsid) come to us
        # rather than to the host's init, so the parent still finds them in our tree while
        # we live. Not under bwrap, whose pid 1 reaps orphans (we never would).
        _prctl(libc, _PR_SET_CHILD_SUBREAPER, 1)

    try:
        _drop_privileges(cfg.get("uid"), cfg.get("gid"))
        if _runs_unprivileged():
            held.add("unprivileged_uid")
        else:
            errors["unprivileged_uid"] = "a uid or gid is 0, or capabilities are held"
    except OSError as exc:
        errors["unprivileged_uid"] = str(exc)

    # Built before the rlimits: loading libseccomp needs file descriptors and address space.
    syscall_filter = None
    if cfg.get("seccomp"):
        try:
            syscall_filter = _build_filter(cfg.get("pyseccomp_path"))
        except Exception as exc:  # ImportError, OSError from libseccomp, RuntimeError
            errors["seccomp"] = f"{type(exc).__name__}: {exc}"

    try:
        _set_rlimits(cfg)
        held.add("rlimits")
    except (OSError, ValueError) as exc:
        errors["rlimits"] = str(exc)

    # no_new_privs: setuid binaries can no longer raise privileges; also what lets an
    # unprivileged process load a seccomp filter at all.
    nnp = _prctl(libc, _PR_SET_NO_NEW_PRIVS, 1)
    if syscall_filter is not None:
        if not nnp:
            errors["seccomp"] = "PR_SET_NO_NEW_PRIVS failed"
        else:
            try:
                syscall_filter.load()
                held.add("seccomp")
            except OSError as exc:
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
    """True when no uid or gid of this process is 0 and it holds no capability.

    That the uid is also unprivileged on the host cannot be seen from here: bubblewrap's
    nested user namespace (--disable-userns) maps our uid to 0 of its *intermediate*
    namespace whatever the host uid is. The parent guarantees it by starting bwrap as the
    sandbox uid (setpriv), never as root mapping itself to another uid.
    """
    if 0 in os.getresuid() or 0 in os.getresgid():
        return False
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16) == 0
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


class _AnyForm:
    """Stands in for typing's special forms in pyseccomp's (evaluated) annotations."""

    def __getitem__(self, item: object) -> _AnyForm:
        return self


def _stub_modules() -> dict:
    """Featherweight stand-ins for the two imports that make pyseccomp slow to load.

    * ctypes.util: pyseccomp calls find_library("c") and find_library("seccomp") at import,
      and on Linux that spawns `ldconfig -p` (~20 ms). Both sonames are stable ABI names,
      so dlopen() finds them through the loader cache directly.
    * typing (~4 ms): pyseccomp only needs names for annotations, plus cast and overload.

    Only modules not imported yet are stubbed, and only while pyseccomp loads; any surprise
    (a name the stub lacks, a library that does not load) falls back to the real modules.
    """
    import types

    util = types.ModuleType("ctypes.util")
    util.find_library = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}.get  # type: ignore[attr-defined]
    typing_stub = types.ModuleType("typing")
    form = _AnyForm()
    for name in ("Any", "Collection", "Iterable", "Union", "Optional", "List", "Dict"):
        setattr(typing_stub, name, form)
    typing_stub.cast = lambda typ, value: value  # type: ignore[attr-defined]
    typing_stub.overload = lambda func: func  # type: ignore[attr-defined]
    stubs = {"ctypes.util": util, "typing": typing_stub}
    return {name: module for name, module in stubs.items() if name not in sys.modules}


def _load_pyseccomp(path: str | None):
    """Import pyseccomp (from sys.path, else from `path`) in about a millisecond."""
    if "pyseccomp" in sys.modules:
        return sys.modules["pyseccomp"]
    stubs = _stub_modules()
    sys.modules.update(stubs)
    if "ctypes.util" in stubs:
        ctypes.util = stubs["ctypes.util"]  # type: ignore[attr-defined]
    try:
        return _import_from(path)
    except Exception:
        sys.modules.pop("pyseccomp", None)
    finally:
        # Leave no stub behind: user code importing typing or ctypes.util gets the real one.
        for name, module in stubs.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        if getattr(ctypes, "util", None) is stubs.get("ctypes.util"):
            del ctypes.util  # type: ignore[attr-defined]
    return _import_from(path)


def _import_from(path: str | None):
    try:
        import pyseccomp

        return pyseccomp
    except ImportError:
        if not path:
            raise
    import importlib.util

    spec = importlib.util.spec_from_file_location("pyseccomp", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load pyseccomp from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pyseccomp"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("pyseccomp", None)
        raise
    return module


def _build_filter(pyseccomp_path: str | None):
    """An allow-by-default filter with targeted denials, returned unloaded.

    Denials answer with an errno rather than killing, so Python raises a clean
    PermissionError the check can report. Syscalls of a foreign ABI (i386 via int 0x80,
    x32) do not match the native filter and kill the process: libseccomp's bad-arch action.
    """
    sc = _load_pyseccomp(pyseccomp_path)
    syscall_filter = sc.SyscallFilter(sc.ALLOW)
    syscall_filter.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    eacces = sc.ERRNO(errno.EACCES)
    eperm = sc.ERRNO(errno.EPERM)

    # The one rule that must hold: no network family at all, only AF_UNIX (the job socket,
    # multiprocessing). Errors here propagate, so "seccomp" is never claimed without it.
    for name in ("socket", "socketpair"):
        syscall_filter.add_rule(eacces, name, sc.Arg(0, sc.NE, _AF_UNIX))
    for name in _DENIED_SYSCALLS:
        try:
            syscall_filter.add_rule(eperm, name)
        except (OSError, ValueError):
            pass  # not a syscall on this architecture
    for flag in _CLONE_NS_FLAGS:
        syscall_filter.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    try:
        # clone3 passes its flags in memory, out of a filter's reach: answer ENOSYS, which
        # glibc (pthread_create, fork) treats as "fall back to clone()".
        syscall_filter.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    except (OSError, ValueError):
        pass
    return syscall_filter


# --- self-test probe (contract.sandbox.self_test runs this file as the child script) ---


def _fails(action) -> bool:
    try:
        action()
    except Exception:
        return True
    return False


def _probe(job: dict) -> dict:
    import socket

    probe = job.get("probe") or {}
    secret = probe.get("secret") or "\0never"

    def connect() -> None:
        socket.create_connection(("127.0.0.1", int(probe["port"])), timeout=1).close()

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

    project_file = probe.get("project_file") or "/etc/shadow"
    host_pid = int(probe.get("host_pid") or 0)
    return {
        "network_blocked": _fails(connect),
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
    reply["probes"] = _probe(job)
    wire.send(sock, reply)
    return 0


if __name__ == "__main__":
    # Run as a script, sys.path[0] is this package's folder; the runtime folder above it is
    # where the sandbox put pyseccomp.
    sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(_main(sys.argv))
