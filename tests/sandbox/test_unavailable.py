"""Fail closed: where the sandbox cannot be had, nothing of the user's runs, and the check
says why and what to do. The kernel's own refusal is real here: a user namespace of the
test's whose user.max_user_namespaces is 0 lets no process below it create one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import cannot_test, requires_root

ROOT = Path(__file__).resolve().parents[2]

# Runs inside `unshare --user --map-root-user`, after the limit is set to 0.
PROBE = """
import json, sys
sys.path[:0] = [{root!r}, {runtime!r}]
import sandbox
from contract.engine import run_check
cfg = sandbox.SandboxConfig(uid=None, cgroup="off")
missing = sandbox.availability(cfg)
result = run_check("def score(i, o):\\n    open({marker!r}, 'w')\\n    return 1.0, {{'feedback': 'x'}}\\n",
                   timeout_s=5, sandbox_config=cfg).to_dict()
print(json.dumps({{"reason": missing and missing.reason, "detail": missing and missing.detail,
                  "self_test": sandbox.self_test(cfg), "result": result}}))
"""


def _without_user_namespaces(code: str) -> dict:
    requires_root()
    unshare = shutil.which("unshare")
    if unshare is None:
        cannot_test("util-linux unshare is missing")
    script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'
    done = subprocess.run(
        [
            unshare,
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            script,
            "sh",
            sys.executable,
            "-c",
            code,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_user_namespaces_no_check_runs_and_the_result_says_why(tmp_path):
    marker = tmp_path / "ran"
    code = PROBE.format(root=str(ROOT), runtime=str(ROOT / "runtime"), marker=str(marker))
    seen = _without_user_namespaces(code)
    assert seen["reason"] == "no_user_namespaces", seen
    assert "namespace" in seen["detail"]
    result = seen["result"]
    load = next(stage for stage in result["stages"] if stage["id"] == "load")
    assert (load["status"], load["problem"]) == ("failed", "sandbox_unavailable")
    assert load["params"]["reason"] == "no_user_namespaces"
    assert result["passed"] is False and result["failed_stage"] == "load"
    # Not one case ran: none of the user's code started anywhere.
    assert {case["status"] for case in result["cases"]} == {"skipped"}
    assert not marker.exists()
    test = seen["self_test"]
    assert test["available"] is False and test["reason"] == "no_user_namespaces"
