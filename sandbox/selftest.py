"""`self_test()`: start one child exactly as the runner does and probe the walls from inside.

The child is runtime/skynet/_confine.py run as a script; both sides speak skynet.wire.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess

from sandbox.config import DEFAULT_RUNTIME_DIR, SandboxConfig
from sandbox.detect import _ordered
from sandbox.errors import SandboxUnavailable
from sandbox.launch import prepare
from sandbox.processes import kill
from skynet import wire

_SELFTEST_SECRET_VAR = "SKYNET_SANDBOX_SELFTEST_SECRET"


def self_test(
    config: SandboxConfig | None = None,
    *,
    runtime_dir: str | None = None,
    timeout_s: float = 10.0,
) -> dict:
    """Start one child exactly as the runner does and probe the walls from inside.

    Returns {"available": bool, "layers": [...], "probes": {name: bool}, "mode": ...,
    "expected_layers": [...]} where a probe is True when the wall held: network_blocked (TCP
    to a 127.0.0.1 listener opened here), abstract_socket_unreachable (an abstract AF_UNIX
    listener opened here), shadow_unreadable, secrets_absent (a fake secret planted in this
    process's environment), project_hidden, uid_unprivileged, host_processes_hidden,
    root_readonly, the walls against running what a check writes (skynet._noexec):
    xattrs_refused, writable_mounts_noexec and written_file_unrunnable, the last two
    False unconfined (no mount namespace, so no noexec mount; README says so), and
    siblings_out_of_reach (skynet._apart: of two cases forked as a warm sandbox forks
    them, neither can open the other's memory nor, where the layer cases_apart holds,
    signal it). "layers" are the layers confirmed from inside the child, cases_apart only
    when that probe held. When the sandbox
    cannot be had, "available" is False and "reason" and "detail" say why (no child runs).
    """
    cfg = config or SandboxConfig()
    rd = runtime_dir or DEFAULT_RUNTIME_DIR
    secret = "skynet-selftest-" + secrets.token_hex(8)
    result: dict = {
        "available": True,
        "layers": [],
        "probes": {},
        "mode": cfg.mode,
        "expected_layers": [],
    }
    with contextlib.ExitStack() as stack:
        listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        abstract = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        abstract_name = "skynet-selftest-" + secrets.token_hex(8)
        abstract.bind("\0" + abstract_name)
        abstract.listen(1)
        parent_sock, child_sock = socket.socketpair()
        stack.enter_context(parent_sock)
        fd = child_sock.fileno()
        previous = os.environ.get(_SELFTEST_SECRET_VAR)
        os.environ[_SELFTEST_SECRET_VAR] = secret  # must not reach the child
        try:
            launch = prepare(rd, "skynet/_confine.py", [str(fd)], timeout_s=timeout_s, config=cfg)
            proc = launch.popen(
                pass_fds=(fd,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except SandboxUnavailable as exc:
            return {**result, "available": False, "reason": exc.reason, "detail": exc.detail}
        finally:
            child_sock.close()
            if previous is None:
                os.environ.pop(_SELFTEST_SECRET_VAR, None)
            else:
                os.environ[_SELFTEST_SECRET_VAR] = previous
        result["mode"] = launch.mode
        result["expected_layers"] = list(launch.layers)
        reply: dict = {}
        grouped = False
        try:
            job = {
                "type": "selftest",
                "limits": launch.limits,
                "probe": {
                    "port": listener.getsockname()[1],
                    "abstract": abstract_name,
                    "secret": secret,
                    "project_file": os.path.abspath(__file__),
                    "host_pid": os.getpid(),
                },
            }
            parent_sock.settimeout(timeout_s)
            wire.send(parent_sock, job)
            answer = wire.recv(parent_sock)
            if answer is None:
                raise EOFError("the sandboxed child closed its socket")
            reply = answer
            # The cgroup is the parent's to confirm: the sandbox's first process is in it.
            grouped = launch.group is not None and proc.pid in launch.group.members()
        except (OSError, EOFError, ValueError, wire.ProtocolError) as exc:
            result["error"] = f"no answer from the sandboxed child: {exc}"
        finally:
            kill(proc, launch)
            stderr = b""
            with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
                stderr = proc.communicate(timeout=2)[1] or b""
        if stderr.strip() and "error" in result:
            result["error"] += "; stderr: " + stderr.decode("utf-8", "replace").strip()[-500:]
    if reply.get("error"):
        result["error"] = reply["error"]
    probes = {name: bool(value) for name, value in (reply.get("probes") or {}).items()}
    confirmed = set(reply.get("layers") or ())
    if (
        "namespaces" in launch.layers
        and probes.get("host_processes_hidden")
        and probes.get("project_hidden")
        and probes.get("network_blocked")
        and probes.get("abstract_socket_unreachable")
    ):
        confirmed.add("namespaces")
    if grouped:
        confirmed.add("cgroup")
    if not probes.get("siblings_out_of_reach"):
        confirmed.discard("cases_apart")
    result["layers"] = list(_ordered(confirmed))
    result["probes"] = probes
    return result
