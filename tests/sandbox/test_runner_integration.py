"""The sandbox through the real runner: contract.engine.run_check() and skynet_child.py."""

from __future__ import annotations

import json
import time

import pytest

import sandbox

from .conftest import assert_nothing_left, bwrap_config, requires_bwrap

engine = pytest.importorskip("contract.engine")

BENIGN = "def score(input, output, expected):\n    return 1.0, 'ok'\n"


@pytest.fixture
def cfg() -> sandbox.SandboxConfig:
    requires_bwrap()
    return bwrap_config()


def test_runaway_metric_with_a_daemon_is_timed_out_and_cleaned_up(cfg, no_leftovers):
    source = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(10**6)\n"
        "while True:\n"
        "    pass\n"
    )
    started = time.monotonic()
    result = engine.run_check(source, timeout_s=1, sandbox_config=cfg).to_dict()
    assert time.monotonic() - started < 3 * 1 + 3
    assert result["failed_stage"] == "load"
    load = next(s for s in result["stages"] if s["id"] == "load")
    assert load["problem"] == "timeout", load
    assert_nothing_left()
    after = engine.run_check(BENIGN, timeout_s=1, sandbox_config=cfg).to_dict()
    assert next(s for s in after["stages"] if s["id"] == "load")["status"] == "passed"
    # Every layer, Landlock's where the kernel has them.
    assert after["layers"] == list(sandbox.active_layers(cfg))
    assert set(sandbox.LAYERS) - set(after["layers"]) <= {"landlock", "cases_apart"}


def test_metric_sees_no_secrets_files_or_network(cfg, no_leftovers, monkeypatch):
    monkeypatch.setenv("DJANGO_SECRET_KEY", "django-planted-4711")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:planted-4711@db/prod")
    source = (
        "import os, socket\n"
        "def attempt(action):\n"
        "    try:\n"
        "        return repr(action())[:200]\n"
        "    except Exception as exc:\n"
        "        return type(exc).__name__\n"
        "def score(input, output, expected):\n"
        "    seen = {\n"
        "        'env': dict(os.environ),\n"
        "        'shadow': attempt(lambda: open('/etc/shadow').read()),\n"
        "        'init_env': attempt(lambda: open('/proc/1/environ', 'rb').read()),\n"
        "        'tcp': attempt(lambda: socket.create_connection(('127.0.0.1', 22), 1)),\n"
        "        'work': attempt(lambda: os.listdir('/work')),\n"
        "    }\n"
        "    return 1.0, repr(seen)\n"
    )
    result = engine.run_check(source, timeout_s=2, sandbox_config=cfg).to_dict()
    text = json.dumps(result)
    # The planted words, not their digits: a timing such as 1.34711 ms may hold those.
    assert "planted" not in text
    case = result["cases"][0]
    # The dict comes back inside a repr (quotes escaped once more): undo that to read it.
    feedback = (case["feedback"] or case["repr"]).replace("\\'", "'")
    assert "'shadow': 'FileNotFoundError'" in feedback, feedback
    assert "'tcp': 'PermissionError'" in feedback
    assert "'work': 'FileNotFoundError'" in feedback
    assert_nothing_left()
