"""`skynet check` against the real server, worker and Redis: its exit codes, its report,
its JSON, and the same result as the check's own page."""

from __future__ import annotations

import pytest

import wording
from checks.models import Check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

PASSING = """
def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""

# A bare number: the contract's second value is missing.
FAILING = """
def score(input, output, expected=None):
    return 1.0
"""


def test_a_passing_metric_exits_0(cli, celery_worker_process, tmp_path):
    (tmp_path / "metric.py").write_text(PASSING)
    done = cli("check", "metric.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "PASSED"
    assert "/checks/" in done.stdout
    assert cli.token not in done.stdout + done.stderr


def test_a_failing_metric_exits_1_with_the_servers_words_in_json(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(FAILING)
    code, check = cli.json("check", "metric.py", "--language", "es")
    assert code == 1
    assert check["status"] == "failed" and check["passed"] is False
    stored = Check.objects.get(pk=check["id"])
    assert stored.status == Check.Status.FAILED
    assert [case["problem"] for case in check["result"]["cases"]] == [
        case["problem"] for case in stored.result["cases"]
    ]
    assert check["result"]["cases"][0]["problem"] == "not_a_pair"
    # In Spanish, as the page words it for a reader of Spanish.
    spanish = wording.render(stored.result, "es")["cases"][0]["message"]
    assert check["result"]["cases"][0]["message"] == spanish
    assert spanish != wording.render(stored.result, "en")["cases"][0]["message"]
    assert check["url"].startswith("/es/checks/")
    # The text report says the failing stage's words once, on its own line.
    text = cli("check", "metric.py")
    stage = next(
        s for s in wording.render(stored.result, "en")["stages"] if s["status"] == "failed"
    )
    assert text.returncode == 1 and text.stdout.startswith("FAILED\n")
    assert text.stdout.count(stage["message"]) == 1, text.stdout


def test_cases_from_a_file_are_the_ones_checked(cli, celery_worker_process, tmp_path):
    (tmp_path / "metric.py").write_text(PASSING)
    lines = [
        '{"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}}',
        '{"input": {"q": "b"}, "output": "y", "expected": {"label": "z"}}',
        '{"input": {"q": "c"}, "output": "w", "expected": {"label": "w"}}',
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    code, check = cli.json("check", "metric.py", "--cases", "cases.jsonl")
    assert code == 0
    assert [case["score"] for case in check["result"]["cases"]] == [1.0, 0.0, 1.0]


def test_usage_and_connection_errors_exit_2(cli, tmp_path, live_server):
    missing = cli("check", "nothing.py")
    assert missing.returncode == 2 and "nothing.py" in missing.stderr
    (tmp_path / "metric.py").write_text(PASSING)
    (tmp_path / "cases.jsonl").write_text('{"input": 1}\n')
    bad_cases = cli("check", "metric.py", "--cases", "cases.jsonl")
    assert bad_cases.returncode == 2 and "1" in bad_cases.stderr
    refused = cli("check", "metric.py", SKYNET_TOKEN="skn_wrong")
    assert refused.returncode == 2 and "token" in refused.stderr.lower()
    unreachable = cli("check", "metric.py", SKYNET_URL="http://127.0.0.1:9")
    assert unreachable.returncode == 2 and "Cannot reach" in unreachable.stderr
    assert cli.token not in missing.stderr + refused.stderr + unreachable.stderr


def test_login_saves_the_token_readable_by_its_owner_only(cli, tmp_path):
    done = cli("login", "--token-stdin", stdin=cli.token + "\n", SKYNET_TOKEN="")
    assert done.returncode == 0, done.stderr
    assert "alice" in done.stdout and cli.token not in done.stdout
    config = tmp_path / "config.json"
    assert config.stat().st_mode & 0o777 == 0o600
    assert cli.token in config.read_text()
    (tmp_path / "metric.py").write_text(PASSING)
    # Later commands find the saved token without SKYNET_TOKEN.
    me = cli("check", "nothing.py", SKYNET_TOKEN="")
    assert me.returncode == 2 and "not found" in me.stderr
