"""What each sandbox layer adds to a check's start-up.

Measures start-to-first-frame (Popen until the child's first frame arrives, i.e. the moment
user code could start) for a bare interpreter and then with each layer added:

    bare        python -E -s -B child.py FD, reads the job, answers
    +rlimits    + _confine.apply() without seccomp (rlimits, PDEATHSIG, env check)
    +seccomp    + the worker's seccomp filter, loaded by the child (BPF from the job)
    +landlock   + Landlock: execve only beneath the installed folders (where the kernel
                  has it)
    +uid        + setpriv to an unprivileged uid (SKYNET_SANDBOX=unconfined, no cgroup)
    +cgroup     + a cgroup of its own for the check's memory and processes
    +bwrap      + bubblewrap namespaces and the sandbox's own noexec /tmp, made with the
                  capabilities it starts with and drops (the full sandbox)

Variants run round-robin so drift hits them alike; the bare baseline is measured in the same
run. Usage (as root, like the worker): .venv/bin/python scripts/bench/bench_sandbox.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sandbox  # noqa: E402 - needs the project root on sys.path

CHILD = """
import json, os, sys
from skynet import _confine

def read_exact(fd, size):
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data

fd = int(sys.argv[1])
job = json.loads(read_exact(fd, int.from_bytes(read_exact(fd, 4), "big")))
layers = _confine.apply(job["limits"]) if job["apply"] else []
body = json.dumps({"type": "ready", "layers": layers}).encode()
os.write(fd, len(body).to_bytes(4, "big") + body)
"""


def _runtime_dir() -> str:
    path = tempfile.mkdtemp(prefix="skynet-bench-", dir="/tmp")
    os.chmod(path, 0o755)
    with open(os.path.join(path, "bench_child.py"), "w") as fh:
        fh.write(CHILD)
    os.chmod(os.path.join(path, "bench_child.py"), 0o644)
    os.symlink(ROOT / "runtime" / "skynet", os.path.join(path, "skynet"))
    return path


def _variants(runtime_dir: str, timeout_s: float) -> dict:
    """name -> function(fd) returning (argv, env, limits or None, launch or None)."""
    python = sandbox.SandboxConfig().python
    script = os.path.join(runtime_dir, "bench_child.py")
    plain_argv = [python, "-E", "-s", "-B", script]
    no_uid = sandbox.SandboxConfig(uid=None, mode="unconfined", cgroup="off")
    env = sandbox.sandbox_env()

    def direct(seccomp: bool | None, landlock: bool = False):
        def build(fd: int):
            limits = None
            if seccomp is not None:
                limits = {**sandbox.limits_for(timeout_s, no_uid), "required": []}
                if not seccomp:
                    limits["seccomp"] = None
                if not landlock:
                    limits.pop("exec_paths", None)
            return [*plain_argv, str(fd)], env, limits, None

        return build

    def through_prepare(cfg: sandbox.SandboxConfig):
        def build(fd: int):
            launch = sandbox.prepare(
                runtime_dir, "bench_child.py", [str(fd)], timeout_s=timeout_s, config=cfg
            )
            return launch.argv, launch.env, launch.limits, launch

        return build

    variants = {
        "bare": direct(None),
        "+rlimits": direct(False),
        "+seccomp": direct(True),
    }
    if "landlock" in sandbox.active_layers(no_uid):
        variants["+landlock"] = direct(True, landlock=True)
    if os.geteuid() == 0:
        unconfined = sandbox.SandboxConfig(mode="unconfined", cgroup="off")
        variants["+uid"] = through_prepare(unconfined)
        grouped = sandbox.SandboxConfig(mode="unconfined")
        if "cgroup" in sandbox.active_layers(grouped):
            variants["+cgroup"] = through_prepare(grouped)
        if sandbox.availability(sandbox.SandboxConfig()) is None:
            variants["+bwrap"] = through_prepare(sandbox.SandboxConfig())
    return variants


def _one(build) -> float:
    parent, child = socket.socketpair()
    fd = child.fileno()
    started = time.perf_counter()
    argv, env, limits, launch = build(fd)
    streams = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if launch is not None:
        proc = launch.popen(pass_fds=(fd,), **streams)
    else:
        proc = subprocess.Popen(argv, env=env, pass_fds=(fd,), start_new_session=True, **streams)
    child.close()
    try:
        job = {"apply": limits is not None, "limits": limits or {}}
        body = json.dumps(job).encode()
        parent.sendall(len(body).to_bytes(4, "big") + body)
        parent.settimeout(10)
        header = parent.recv(4)
        if len(header) < 4:
            raise RuntimeError(f"child failed: {proc.communicate()[1].decode()[-500:]}")
        elapsed = time.perf_counter() - started
    finally:
        sandbox.kill(proc, launch)
        proc.communicate()
        parent.close()
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    runtime_dir = _runtime_dir()
    try:
        variants = _variants(runtime_dir, timeout_s=5.0)
        for build in variants.values():  # warm-up: caches, detection, page cache
            _one(build)
            _one(build)
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(options.runs):
            for name, build in variants.items():
                samples[name].append(_one(build))
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)

    base = statistics.median(samples["bare"])
    print(
        f"start to first frame, {options.runs} runs each, python {sandbox.SandboxConfig().python}"
    )
    print(f"{'variant':<10} {'median ms':>10} {'p90 ms':>8} {'+ms vs bare':>12} {'x bare':>7}")
    for name, values in samples.items():
        median = statistics.median(values)
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        print(
            f"{name:<10} {median:>10.1f} {p90:>8.1f} {median - base:>+12.1f} {median / base:>7.2f}"
        )


if __name__ == "__main__":
    main()
