"""The run file `skynet run submit` reads: the documented example read into the draft's
body, its files relative to it; a file that cannot be used stops with exit 2 before
anything is sent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skynet_client.commands import runfile
from skynet_client.exits import USAGE, Stop

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"


def test_the_example_reads_into_the_drafts_body(tmp_path):
    found = runfile.read(str(EXAMPLES / "run.toml"))
    body = found.body
    assert body["artifact"] == {
        "kind": "prompt",
        "content": (EXAMPLES / "prompt.txt").read_text(),
    }
    assert body["metric"] == {"source": (EXAMPLES / "metric.py").read_text()}
    assert body["roles"] == {"country": "input", "capital": "output"}
    assert body["splits"] == {
        "train_percent": 50,
        "validation_percent": 50,
        "test_percent": 0,
        "seed": 7,
    }
    assert body["budget"] == {"metric_calls": 60, "usd": 0.5}
    assert (body["name"], body["engine"]) == ("capitals", "auto")
    assert found.dataset_id is None
    assert found.dataset_bytes() == (EXAMPLES / "capitals.jsonl").read_bytes()


def test_a_program_and_its_text_come_from_their_files(tmp_path):
    (tmp_path / "program.py").write_text("def run(artifact, input):\n    return artifact\n")
    (tmp_path / "artifact.txt").write_text("Paris")
    (tmp_path / "run.toml").write_text(
        '[artifact]\nkind = "python"\nfile = "program.py"\ntext_file = "artifact.txt"\n'
        '[dataset]\nid = 4\n[metric]\nid = 2\nversion = 3\n[models]\ntask = "m"\n'
    )
    found = runfile.read(str(tmp_path / "run.toml"))
    assert found.body["artifact"]["program"].startswith("def run(")
    assert found.body["artifact"]["content"] == "Paris"
    assert found.body["metric"] == {"metric_id": 2, "version": 3}
    assert (found.dataset_id, found.dataset_path) == (4, None)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda text: text.replace('file = "prompt.txt"', 'file = "gone.txt"'), "gone.txt"),
        (lambda text: text.replace("[metric]", "[metric"), "not valid TOML"),
        (lambda text: text.replace('kind = "prompt"', 'kind = "poem"'), "artifact.kind"),
        (lambda text: text.replace('file = "capitals.jsonl"', ""), "[dataset]"),
        (lambda text: text.replace("[models]", "[other]"), "unknown key other."),
        (lambda text: text.replace("[models]", "[model]"), "Did you mean models?"),
    ],
)
def test_a_run_file_that_cannot_be_used_stops_with_exit_2(tmp_path, change, said):
    for name in ("prompt.txt", "metric.py", "capitals.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "run.toml").write_text(change((EXAMPLES / "run.toml").read_text()))
    with pytest.raises(Stop) as stopped:
        runfile.read(str(tmp_path / "run.toml"))
    assert stopped.value.code == USAGE and said in stopped.value.message
