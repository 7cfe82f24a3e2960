"""Where the CPU of a stretch of work went, by kind of process, from /proc.

`snapshot()` before and after; `spent(before, after)` gives seconds per kind: each live
process's own time plus what its reaped children used (cutime/cstime), so a sandbox
that lived and died in between is counted in the process that reaped it (the zygote, a
worker). "machine" is all busy time of all CPUs; "kernel and other" is what none of the
processes seen accounts for (namespace teardown in kernel workers, say).
"""

from __future__ import annotations

import os

TICK = os.sysconf("SC_CLK_TCK")


def _kind(pid: str, me: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except OSError:
        return "other"
    if int(pid) == me:
        return "this script"
    if b"skynet_zygote" in cmdline or b"skynet_warm" in cmdline or b"bwrap" in cmdline:
        return "sandboxes"
    if b"celery" in cmdline:
        return "celery workers"
    if b"gunicorn" in cmdline:
        return "web"
    if b"redis" in cmdline:
        return "redis"
    return "other"


def snapshot() -> dict:
    me = os.getpid()
    found: dict[str, tuple[str, float]] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name.
        ticks = sum(int(x) for x in fields[11:15])
        found[pid] = (_kind(pid, me), ticks / TICK)
    with open("/proc/stat") as fh:
        values = [int(x) for x in fh.readline().split()[1:]]
    busy = (sum(values) - values[3] - values[4]) / TICK  # all but idle and iowait
    return {"processes": found, "machine": busy}


def spent(before: dict, after: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for pid, (kind, seconds) in after["processes"].items():
        if pid in before["processes"]:
            out[kind] = out.get(kind, 0.0) + seconds - before["processes"][pid][1]
    machine = after["machine"] - before["machine"]
    out["kernel and other"] = max(0.0, machine - sum(out.values())) + out.pop("other", 0.0)
    out["machine"] = machine
    return out
