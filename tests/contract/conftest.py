"""Helpers for the contract engine tests: metric sources are written inline."""

from __future__ import annotations

import os
import textwrap

import pytest

from contract.cases import DEFAULT_CASES
from contract.engine import run_check
from contract.results import CheckResult

# The wrong-label case: output "other", expected {"label": "bug"}.
ONE_CASE = [DEFAULT_CASES[1]]


def _children_of(pid: int) -> list[int]:
    """Pids (zombies included) whose parent is `pid`, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields follow the last ")".
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Overrides tests/conftest.py's autouse fixture of this name, which needs
    pytest-django's `settings`: these tests run without Django (-p no:django)."""
    yield


@pytest.fixture
def check():
    """check(source, *, cases=None, timeout_s=10, one=False, **kw) -> CheckResult.

    `source` is dedented; one=True runs only the wrong-label case (faster).
    """

    def run(source: str | bytes, *, one: bool = False, timeout_s: float = 10, **kw) -> CheckResult:
        if isinstance(source, str):
            source = textwrap.dedent(source).lstrip("\n")
        if one:
            kw.setdefault("cases", ONE_CASE)
        return run_check(source, timeout_s=timeout_s, **kw)

    return run


@pytest.fixture
def no_stray_children():
    """Fails the test if it leaves a child process (running or zombie) behind.

    Processes that were already running before the test (a session's Redis or Celery
    worker, say) are not the test's.
    """
    before = set(_children_of(os.getpid()))
    yield
    assert sorted(set(_children_of(os.getpid())) - before) == []
