"""convert() in a child process held to a CPU time and a memory limit.

A web thread that converts in its own process is held as long as the conversion takes,
and its memory stays grown after. Here the conversion runs in `python -m
contract.convert.child`, which sets its own limits before it reads the source: past its
CPU seconds the kernel ends it, past its memory its allocations fail. Either way the
caller gets ConvertError("too_costly") with the limits, never a held thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from contract.convert.conversion import Conversion
from contract.convert.notes import ConvertError, Note

SECONDS = 10
MEGABYTES = 1024
_ROOT = Path(__file__).resolve().parents[2]


def convert_bounded(
    source: str,
    *,
    seconds: int = SECONDS,
    megabytes: int = MEGABYTES,
    metric: str | None = None,
) -> Conversion:
    """What convert(source, metric) gives, computed within `seconds` of CPU and
    `megabytes` of memory; raises ConvertError as convert() does, and "too_costly" past
    a limit."""
    limits = {"seconds": seconds, "megabytes": megabytes}
    request = json.dumps({"source": source, "metric": metric, **limits}).encode("ascii")
    command = [sys.executable, "-E", "-s", "-m", "contract.convert.child"]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
    try:
        done = subprocess.run(
            command,
            input=request,
            capture_output=True,
            cwd=_ROOT,
            env=environment,
            timeout=seconds * 2 + 5,  # CPU seconds bound it first; this is for a stall
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConvertError("too_costly", None, limits) from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):  # ended by the kernel, or out of memory at start
        raise ConvertError("too_costly", None, limits)
    if "error" in answer:
        error = answer["error"]
        params = limits if error["code"] == "too_costly" else error["params"]
        raise ConvertError(error["code"], error["line"], params)
    return from_dict(answer["conversion"])


def from_dict(data: dict) -> Conversion:
    """A Conversion from its to_dict()."""
    notes = [Note(note["code"], note["line"], note["params"]) for note in data["notes"]]
    return Conversion(data["source"], data["framework"], data["changed"], notes)
