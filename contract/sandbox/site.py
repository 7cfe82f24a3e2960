"""The third-party packages a DSPy program needs, staged where the sandbox can read them.

A DSPy program imports dspy, and dspy lives in the worker's virtualenv, which may sit in
a folder only its owner can enter. As the runtime is (contract.sandbox.stage), the
packages are copied, once per worker process, into a private folder the sandbox's user may
read, and bound read-only at SITE_MOUNT in every sandbox; the case that runs a DSPy
program puts that folder on its sys.path.

Only what DSPy needs is copied: a probe run with the worker's own interpreter imports
dspy and runs a program through the runtime's engine, and the top-level packages that
this loaded from the virtualenv (with their .pyc and their distributions' metadata) are
what is staged (about 36 MB for dspy 3.4.1, of its 394 MB installed). Without dspy,
`site_packages()` is None and a DSPy program's run says "dspy_unavailable".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading

from contract.sandbox.config import SITE_MOUNT
from contract.sandbox.stage import PREFIX, private_root

log = logging.getLogger("contract.sandbox")

__all__ = ["SITE_MOUNT", "site_packages"]

# Run with the worker's interpreter: which top-level names of its site-packages a DSPy
# program's run loads, and the metadata folders of the distributions they belong to.
_PROBE = r"""
import importlib.metadata as md, json, os, sys, tempfile
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
tops = set()
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None) or ""
    if path.startswith(site + os.sep):
        tops.add(path[len(site) + 1 :].split(os.sep)[0])
owners = md.packages_distributions()
dists = set()
for top in tops:
    for name in owners.get(top.removesuffix(".py"), []):
        dist = md.distribution(name)
        dists.add(os.path.basename(str(dist._path)))
skip = {"skynet", "_distutils_hack"}
tops = {t for t in tops if not t.startswith("__editable__") and t.split(".")[0] not in skip}
print(json.dumps({"site": site, "tops": sorted(tops), "dists": sorted(dists),
                  "version": dspy.__version__}))
"""

_lock = threading.Lock()
_staged: dict[tuple, str | None] = {}


def _probe(python: str) -> dict | None:
    try:
        done = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, timeout=120, check=False, text=True
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("DSPy programs cannot run here: the probe did not run (%s)", exc)
        return None
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [""]
        log.warning("DSPy programs cannot run here: %s", tail[0][:300])
        return None
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _copy(found: dict, root: str) -> None:
    site = found["site"]
    target = os.path.join(root, "site")
    os.makedirs(target)
    for name in [*found["tops"], *found["dists"]]:
        source = os.path.join(site, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(target, name), symlinks=False)
        elif os.path.isfile(source):
            shutil.copy2(source, os.path.join(target, name))


def _build(found: dict, gid: int | None) -> str:
    key = hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()
    root = private_root(f"{PREFIX}site-{key[:12]}-", gid, lambda root: _copy(found, root))
    return os.path.join(root, "site")


def site_packages(gid: int | None, python: str | None = None) -> str | None:
    """The staged folder of DSPy's packages for this process (made on first use), or None
    when dspy cannot be had here (it is not installed, or nothing could be staged)."""
    python = python or sys.executable
    key = (gid, python)
    with _lock:
        if key in _staged:
            found = _staged[key]
            if found is None or os.path.isdir(found):
                return found
        probed = _probe(python)
        staged = None
        if probed is not None:
            try:
                staged = _build(probed, gid)
            except OSError as exc:
                log.warning("DSPy programs cannot run here: %s", exc)
        _staged[key] = staged
        return staged
