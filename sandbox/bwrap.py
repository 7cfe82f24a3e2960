"""The bubblewrap command line shared by every launch: namespaces, system binds, mounts.

`prepare()` puts the staged runtime's bind (sandbox.launch) between
`_bwrap_prefix()` and `_bwrap_tail()`; the detection probe (sandbox.detect) runs
the same two, with ALONE_FLAGS, around `true`, so what it proves is what every launch gets.
"""

from __future__ import annotations

import functools
import os
import subprocess

from sandbox.config import _SANDBOX_ENV, TMP_MOUNT, SandboxConfig, sandbox_env


@functools.lru_cache(maxsize=4)
def _bwrap_options(bwrap: str) -> frozenset[str]:
    """Options this bwrap knows (--disable-userns needs 0.8, --size 0.5)."""
    try:
        done = subprocess.run(
            [bwrap, "--help"], capture_output=True, timeout=10, check=False, env=sandbox_env()
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    return frozenset(word for word in text.split() if word.startswith("--"))


# Hardening that an older bubblewrap named by SKYNET_BWRAP may lack; left out (with a
# warning) rather than failing. The wheel's bwrap 0.11 knows them all.
_OPTIONAL_FLAGS = frozenset({"--unshare-cgroup-try", "--disable-userns", "--size"})

_NAMESPACE_FLAGS = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    # The sandbox may not create user namespaces of its own (kernel attack surface).
    "--disable-userns",
    "--die-with-parent",
    # setsid() for the command: no controlling terminal to push input into (TIOCSTI).
    "--new-session",
    "--hostname",
    "sandbox",
)


# Held by a sandbox's first process inside bwrap's user namespace, and only there: a
# sandbox bwrap starts alone uses them in its first moments to remount its /tmp noexec
# (bwrap's --tmpfs takes no mount flags) and then drops them all, checked, before anything
# else runs (skynet._noexec); a zygote keeps them to make each check sandbox's namespaces.
SETUP_CAPS = ("--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP")
# A sandbox bwrap starts alone: its first process is its pid 1. bwrap's reaper would
# otherwise stay in bwrap's mount namespace, where /tmp is not noexec, within reach of
# /proc/1/root. Not optional: a bwrap without it fails the detection probe.
ALONE_FLAGS = (*SETUP_CAPS, "--as-pid-1")

_TOP_FOLDERS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def _interpreter_prefixes(config: SandboxConfig) -> set[str]:
    """The install folders of an interpreter outside /usr (a pyenv or /opt build)."""
    found = set()
    for candidate in (config.python, os.path.realpath(config.python)):
        prefix = os.path.dirname(os.path.dirname(os.path.abspath(candidate)))
        if prefix != "/usr" and not prefix.startswith("/usr/") and prefix != "/":
            found.add(prefix)
    return found


def _system_binds(config: SandboxConfig) -> list[str]:
    """Read-only view of the interpreter: /usr, the merged-/usr links, and the loader cache."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_FOLDERS:
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(path):
            args += ["--ro-bind", os.path.realpath(path), path]
    extra = set(config.extra_ro_binds) | _interpreter_prefixes(config)
    for path in sorted(extra):
        args += ["--ro-bind", path, path]
    return args


def exec_folders(config: SandboxConfig) -> list[str]:
    """Where a sandbox may execute programs from (Landlock, skynet._noexec): the installed
    system and the interpreter's own folders, the same paths inside bwrap and out. Never
    /tmp, /var/tmp, /dev/shm or a home folder: nothing a check can write."""
    folders = {"/usr", *config.extra_ro_binds, *_interpreter_prefixes(config)}
    folders.update("/" + name for name in _TOP_FOLDERS if os.path.isdir("/" + name))
    return sorted(folders)


def _supported(bwrap: str, args: list[str]) -> list[str]:
    """Drop optional options (and the value of --size) this bwrap does not know."""
    known = _bwrap_options(bwrap)
    missing = {flag for flag in _OPTIONAL_FLAGS if flag not in known}
    if not missing:
        return args
    kept: list[str] = []
    skip = 0
    for arg in args:
        if skip:
            skip -= 1
        elif arg in missing:
            skip = 1 if arg == "--size" else 0
        else:
            kept.append(arg)
    return kept


def _bwrap_prefix(config: SandboxConfig, bwrap: str) -> list[str]:
    return _supported(bwrap, [bwrap, *_NAMESPACE_FLAGS, *_system_binds(config)])


def _bwrap_tail(config: SandboxConfig, bwrap: str, seccomp_fd: int | None) -> list[str]:
    """Mounts made after the runtime binds, a syscall filter and the environment.

    Only the detection probe passes `seccomp_fd`: bwrap then installs that filter before
    `true`, which proves the kernel takes the program. A sandbox loads it itself
    (skynet._confine), after its noexec mount, which the filter would refuse.
    """
    args = [] if seccomp_fd is None else ["--seccomp", str(seccomp_fd)]
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(config.tmp_size_mb * 1024 * 1024),
        "--tmpfs",
        TMP_MOUNT,
        # bwrap leaves its root tmpfs and /dev writable and without a size cap: make them
        # read-only so the only writable place is the capped /tmp.
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        TMP_MOUNT,
        "--clearenv",
    ]
    for key, value in _SANDBOX_ENV.items():
        args += ["--setenv", key, value]
    return _supported(bwrap, args)
