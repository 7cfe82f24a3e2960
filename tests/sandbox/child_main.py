"""A stand-in for runtime/skynet_child.py, kept tiny and independent of the runner.

It follows the real flow: read one job frame (4-byte big-endian length + UTF-8 JSON) from the
socket whose fd number is argv[1], call skynet._confine.apply(job["limits"]) before anything
else, send a "ready" frame, then exec job["code"]. The code may call report(value) to send
a frame back. A "done" frame follows when the code returns, "raised" when it raises.
"""

from __future__ import annotations

import json
import os
import sys

from skynet import _confine


def _read_exact(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _send(fd: int, payload: dict) -> None:
    body = json.dumps(payload, default=repr).encode("utf-8")
    view = memoryview(len(body).to_bytes(4, "big") + body)
    while view:
        view = view[os.write(fd, view) :]


def main() -> None:
    fd = int(sys.argv[1])
    job = json.loads(_read_exact(fd, int.from_bytes(_read_exact(fd, 4), "big")))
    try:
        layers = _confine.apply(job["limits"])
    except _confine.ConfinementError as exc:
        _send(fd, {"type": "fatal", "error": str(exc)})
        os._exit(70)
    _send(fd, {"type": "ready", "layers": layers})

    def report(value: object) -> None:
        _send(fd, {"type": "report", "value": value})

    try:
        exec(job["code"], {"__name__": "__check__", "report": report, "JOB_FD": fd})
    except BaseException as exc:  # noqa: B036 - the hostile code's exceptions are results
        _send(fd, {"type": "raised", "exc": type(exc).__name__, "msg": str(exc)[:500]})
        os._exit(1)
    _send(fd, {"type": "done"})
    os._exit(0)


if __name__ == "__main__":
    main()
