"""`skynet` as a CI job meets it: a token pasted with a newline, a token that cannot be a
token, an address where another server answers, another version of the API, a typo in
run.toml, a value out of range, and Ctrl+C. Each ends with a clear line and the
documented exit code, never a traceback, and never prints the token."""

from __future__ import annotations

import http.server
import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from checks.models import Check
from tests.client.test_client_check import PASSING

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


class _Other(http.server.BaseHTTPRequestHandler):
    """Another server at the workbench's address: a sign-in page, or a JSON service."""

    kind = "text/html"
    body = b"<html><body>Sign in</body></html>"
    headers_out: dict = {}

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", self.kind)
        for name, value in self.headers_out.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def other_server():
    servers = []

    def start(kind: str, body: bytes, headers: dict | None = None) -> str:
        handler = type(
            "Handler", (_Other,), {"kind": kind, "body": body, "headers_out": headers or {}}
        )
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_token_with_a_newline_works_and_a_bad_one_is_never_printed(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(PASSING)
    pasted = cli("check", "metric.py", SKYNET_TOKEN=f" {cli.token}\n")
    assert pasted.returncode == 0, pasted.stderr
    for bad in (f"{cli.token}é", f"{cli.token[:10]} {cli.token[10:]}", f"{cli.token}\x07"):
        for extra in ((), ("--json",)):
            done = cli("check", "metric.py", *extra, SKYNET_TOKEN=bad)
            assert done.returncode == 2, done.stderr
            assert "Traceback" not in done.stderr
            assert "characters no token has" in done.stdout + done.stderr
            assert cli.token[4:] not in done.stdout + done.stderr
            assert cli.token[10:] not in done.stdout + done.stderr


def test_another_server_at_the_address_is_named_not_read_as_a_failed_metric(
    cli, tmp_path, other_server
):
    (tmp_path / "metric.py").write_text(PASSING)
    sign_in = other_server("text/html; charset=utf-8", b"<html>Sign in</html>")
    done = cli("check", "metric.py", SKYNET_URL=sign_in)
    assert done.returncode == 2
    assert f"{sign_in} is not a Skynet workbench: it answered 200 text/html" in done.stderr
    assert "Traceback" not in done.stderr
    service = other_server("application/json", b'{"status": "ok"}')
    done = cli("evaluate", "metric.py", "metric.py", SKYNET_URL=service)
    assert done.returncode == 2
    assert "is not a Skynet workbench: it answered 200 application/json" in done.stderr
    code, document = cli.json("check", "metric.py", SKYNET_URL=service)
    assert code == 2 and "is not a Skynet workbench" in document["error"]["message"]
    assert cli.token not in done.stdout + done.stderr


def test_another_major_version_exits_2_and_another_minor_warns(
    cli, celery_worker_process, tmp_path, monkeypatch
):
    (tmp_path / "metric.py").write_text(PASSING)
    monkeypatch.setattr("api.middleware.API_VERSION", "2.0")
    done = cli("check", "metric.py")
    assert done.returncode == 2
    assert "speaks API version 2.0" in done.stderr and "Traceback" not in done.stderr
    # With the line that installs the client the workbench serves.
    assert f"pip install {cli.url}/client/skynet_client-" in done.stderr
    monkeypatch.setattr("api.middleware.API_VERSION", "1.99")
    done = cli("check", "metric.py")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("API version 1.99") == 1


def test_the_api_index_answers_without_a_token(cli, live_server):
    import httpx

    answer = httpx.get(f"{live_server.url}/api/v1/")
    assert answer.status_code == 200
    assert answer.headers["Skynet-Api-Version"] == answer.json()["version"]
    assert answer.json()["schema"].endswith("/api/v1/schema")


def test_a_typo_in_run_toml_names_the_key_and_the_nearest(cli, tmp_path):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "client" / "examples"
    for name in ("run.toml", "prompt.txt", "metric.py", "capitals.jsonl"):
        (tmp_path / name).write_bytes((examples / name).read_bytes())
    text = (tmp_path / "run.toml").read_text()
    (tmp_path / "run.toml").write_text(text.replace("metric_calls = 60", "metric_call = 40"))
    done = cli("run", "submit", "run.toml")
    assert done.returncode == 2
    assert "unknown key [budget] metric_call. Did you mean metric_calls?" in done.stderr
    (tmp_path / "run.toml").write_text("colour = 'blue'\n" + text)
    done = cli("run", "submit", "run.toml")
    assert done.returncode == 2 and "unknown key colour." in done.stderr


@pytest.mark.parametrize(
    "args, said",
    [
        (("check", "metric.py", "--timeout", "0"), "between 1 and 600 seconds"),
        (("evaluate", "metric.py", "d.csv", "--max-invalid", "120%"), "between 0% and 100%"),
        (("evaluate", "metric.py", "d.csv", "--max-invalid", "-1"), "0 or more"),
        (("evaluate", "metric.py", "d.csv", "--column", "a=label"), "input, expected, ignore"),
    ],
)
def test_values_out_of_range_are_refused_naming_the_range(cli, tmp_path, args, said):
    (tmp_path / "metric.py").write_text(PASSING)
    done = cli(*args)
    assert done.returncode == 2 and said in done.stderr, done.stderr


SLEEPS = """
import time

def score(input, output, expected=None):
    time.sleep(6)
    return 1.0, {"feedback": "Slept."}
"""


def _interrupted(cli, tmp_path, *extra: str) -> tuple[subprocess.CompletedProcess, Check]:
    """`skynet check` on a metric that sleeps, sent SIGINT once its check runs."""
    (tmp_path / "metric.py").write_text(SLEEPS)
    process = subprocess.Popen(
        [sys.executable, "-m", "skynet_client", "check", "metric.py", *extra],
        env=cli.env(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not Check.objects.filter(status=Check.Status.RUNNING).exists():
        assert time.monotonic() < deadline, "the check never started"
        time.sleep(0.1)
    # The worker can claim the check before the client has read the answer to its POST;
    # a Ctrl+C then (the check's number still unknown to it) rightly says only
    # "Interrupted.". Give the answer time to arrive: the cases sleep 6 s.
    time.sleep(2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    check = Check.objects.get()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), check


def _final(check: Check) -> Check:
    deadline = time.monotonic() + 60
    while not check.is_final:
        assert time.monotonic() < deadline, check.status
        time.sleep(0.2)
        check.refresh_from_db()
    return check


def test_ctrl_c_stops_watching_and_the_check_goes_on(cli, celery_worker_process, tmp_path):
    done, check = _interrupted(cli, tmp_path)
    assert done.returncode == 130, done.stderr
    assert f"Stopped watching. Check {check.pk} goes on:" in done.stderr
    assert "Traceback" not in done.stderr
    assert _final(check).status == Check.Status.PASSED


def test_ctrl_c_with_cancel_on_interrupt_cancels_the_check(cli, celery_worker_process, tmp_path):
    done, check = _interrupted(cli, tmp_path, "--cancel-on-interrupt")
    assert done.returncode == 130, done.stderr
    assert f"Check {check.pk} cancelled on the server" in done.stderr
    # The worker stops its sandbox within a second of the cancel.
    assert _final(check).failure == "cancelled"


def test_json_bodies_and_query_parameters_are_read_strictly(cli, live_server):
    import httpx

    headers = {"Authorization": f"Bearer {cli.token}", "Accept-Language": "en"}
    url = f"{live_server.url}/api/v1"
    not_json = httpx.post(
        f"{url}/checks",
        content=b"{source:",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert not_json.status_code == 400
    assert not_json.json()["code"] == "not_json"
    assert not_json.json()["message"].startswith("The body is not JSON: ")
    plain = httpx.post(
        f"{url}/checks",
        content=json.dumps({"source": PASSING}).encode(),
        headers={**headers, "Content-Type": "text/plain"},
    )
    assert plain.status_code == 415 and "text/plain" in plain.json()["message"]
    unknown = httpx.get(f"{url}/datasets", params={"size": 3}, headers=headers)
    assert unknown.status_code == 422
    assert unknown.json() == {
        "code": "unknown_parameter",
        "message": "This address takes no query parameter size. It takes: name, sha256.",
        "field": "size",
    }
    zero = httpx.post(f"{url}/checks", json={"source": PASSING, "timeout_s": 0}, headers=headers)
    assert zero.status_code == 422 and zero.json()["field"] == "timeout_s"
    typo = httpx.post(f"{url}/checks", json={"source": PASSING, "timeout": 5}, headers=headers)
    assert typo.status_code == 422
    assert (typo.json()["code"], typo.json()["field"]) == ("unknown_field", "timeout")
