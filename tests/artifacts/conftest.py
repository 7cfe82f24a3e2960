"""Fixtures for checks that run the user's artifact before the metric. Django-free:
run with `pytest tests/artifacts -p no:django`."""

from __future__ import annotations

import textwrap
import threading

import pytest

from contract.artifacts import Artifact
from contract.engine import run_check
from contract.results import CheckResult

# The fake provider and the gateways of the models layer's tests, reused as they are.
from tests.providers.conftest import catalogue, env, gateway, provider  # noqa: F401

EXACT_MATCH = """
def score(input, output, expected):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct label."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""

# Labels the built-in cases right by keyword: billing, bug, account.
LABELLER = """
RULES = {"charged": "billing", "crashes": "bug", "export": "account"}


def run(artifact, input):
    for word, label in RULES.items():
        if word in input["question"]:
            return label
    return "other"
"""


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Overrides tests/conftest.py's autouse fixture of this name, which needs
    pytest-django's `settings`: these tests run without Django (-p no:django)."""
    yield


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


@pytest.fixture
def check():
    """check(metric, artifact, *, cases=None, timeout_s=10, **kw) -> CheckResult.

    `artifact` is an Artifact, or program source (dedented) for a python artifact.
    """

    def run(metric: str, artifact: Artifact | str, *, timeout_s: float = 10, **kw) -> CheckResult:
        if isinstance(artifact, str):
            artifact = Artifact.python(dedent(artifact))
        return run_check(dedent(metric), timeout_s=timeout_s, artifact=artifact, **kw)

    return run


class CountingHandler:
    """A fake model handler: answers `reply(request)`, counts like providers' CaseHandler."""

    def __init__(self, reply, *, input_tokens=100, output_tokens=20, cost_usd=0.001) -> None:
        self.reply = reply
        self.requests: list[dict] = []
        self.per_call = (input_tokens, output_tokens, cost_usd)
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> dict:
        with self._lock:
            self.requests.append(request)
        return {"text": self.reply(request) if callable(self.reply) else self.reply}

    def usage(self) -> dict | None:
        calls = len(self.requests)
        if not calls:
            return None
        tokens_in, tokens_out, cost = self.per_call
        return {
            "model_calls": calls,
            "input_tokens": calls * tokens_in,
            "output_tokens": calls * tokens_out,
            "cost_usd": round(calls * cost, 10),
            "model_ms": 1.0 * calls,
        }
