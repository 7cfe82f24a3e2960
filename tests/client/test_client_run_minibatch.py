"""`skynet run submit`'s minibatch size: the run file's top-level `minibatch`, or
--minibatch in its place, sent in the draft's body; and the server's warning of a noisy
judge printed as it comes. The server is a stand-in here (what it does with the body is
tests.api.test_api_minibatch's)."""

from __future__ import annotations

import contextlib

import pytest

from skynet_client import main
from skynet_client.commands import run as run_command
from skynet_client.commands import runfile
from skynet_client.exits import USAGE

RUN_FILE = (
    'name = "quiz"\n{minibatch}'
    '[artifact]\nkind = "prompt"\nfile = "prompt.txt"\n'
    '[dataset]\nid = 4\n[metric]\nid = 2\n[models]\ntask = "m"\n'
)


def write_run_file(folder, minibatch: str = "") -> str:
    (folder / "prompt.txt").write_text("What is the capital of {country}?")
    (folder / "run.toml").write_text(RUN_FILE.format(minibatch=minibatch))
    return str(folder / "run.toml")


class StandIn:
    """The server's answers to a submit, and the bodies it was sent."""

    def __init__(self, gate: dict | None) -> None:
        self.posted: list[tuple[str, dict | None]] = []
        self.gate = gate
        self.server = type("Server", (), {"url": "http://server"})()

    def post(self, path: str, body: dict | None = None) -> dict:
        self.posted.append((path, body))
        if path == "/runs/drafts":
            return {"id": 9, "url": "/en/submit/9/", "minibatch_gate": self.gate}
        if path.endswith("/check"):
            return {"id": 3, "passed": True, "page": "http://server/checks/3/"}
        return {"id": 11, "url": "/en/runs/11/"}


@pytest.fixture
def stand_in(monkeypatch):
    def make(gate=None) -> StandIn:
        server = StandIn(gate)

        @contextlib.contextmanager
        def api(args):
            yield server

        monkeypatch.setattr(run_command, "api", api)
        monkeypatch.setattr(run_command, "wait_for_check", lambda client, check, *a, **k: check)
        return server

    return make


def test_the_run_files_minibatch_goes_into_the_body(tmp_path):
    assert runfile.read(write_run_file(tmp_path, "minibatch = 7\n")).body["minibatch"] == 7
    assert "minibatch" not in runfile.read(write_run_file(tmp_path)).body


def test_the_flag_takes_the_place_of_the_run_files(tmp_path, stand_in, capsys):
    server = stand_in()
    path = write_run_file(tmp_path, "minibatch = 7\n")
    assert main.main(["run", "submit", path, "--minibatch", "12"]) == 0
    path_of, body = server.posted[0]
    assert path_of == "/runs/drafts" and body["minibatch"] == 12
    assert body["dataset_id"] == 4


def test_without_either_the_server_keeps_its_default(tmp_path, stand_in):
    server = stand_in()
    assert main.main(["run", "submit", write_run_file(tmp_path)]) == 0
    assert "minibatch" not in server.posted[0][1]


def test_a_size_that_is_no_number_is_a_usage_error(tmp_path, stand_in, capsys):
    server = stand_in()
    assert main.main(["run", "submit", write_run_file(tmp_path), "--minibatch", "many"]) == USAGE
    assert "--minibatch" in capsys.readouterr().err and not server.posted


def test_the_servers_warning_of_a_noisy_judge_is_printed(tmp_path, stand_in, capsys):
    said = "At a minibatch of 3, a candidate better by 0.1 wins only 74% of the time."
    stand_in({"measured": True, "coin_toss": True, "message": said})
    assert main.main(["run", "submit", write_run_file(tmp_path)]) == 0
    assert said in capsys.readouterr().out
