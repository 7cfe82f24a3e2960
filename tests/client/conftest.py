"""The `skynet` command line run as a user runs it: a subprocess, against the real server
(pytest-django's live server), the real Celery worker and Redis, with a token made on the
server's database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.conftest import make_token


@pytest.fixture(autouse=True)
def _api_counts(signup_counts):
    return signup_counts


class Cli:
    def __init__(self, url: str, token: str, home: Path) -> None:
        self.url = url
        self.token = token
        self.home = home

    def env(self, **extra: str) -> dict:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("SKYNET_") and key not in ("LANG", "LC_ALL")
        }
        env.update(
            {
                "SKYNET_URL": self.url,
                "SKYNET_TOKEN": self.token,
                "SKYNET_CONFIG": str(self.home / "config.json"),
                "LANG": "C.UTF-8",
                "PYTHONIOENCODING": "utf-8",
            }
        )
        env.update(extra)
        return env

    def __call__(self, *args: str, timeout: float = 240, stdin: str | None = None, **env: str):
        return subprocess.run(
            [sys.executable, "-m", "skynet_client", *args],
            env=self.env(**env),
            cwd=self.home,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def json(self, *args: str, **kwargs) -> tuple[int, dict]:
        done = self(*args, "--json", **kwargs)
        try:
            return done.returncode, json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"not JSON: {done.stdout!r} {done.stderr!r}") from None


@pytest.fixture
def cli(live_server, owner, tmp_path, session_models, announced) -> Cli:
    """The live server's waits hear the test worker's announcements (no polling)."""
    return Cli(live_server.url, make_token(owner), tmp_path)
