"""`skynet run` against the real server, worker and Redis: the example run file submitted
and watched to its end (its check and its run in the worker, the models answered by the
loopback quiz provider), then its bundle downloaded."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from runs.models import Run
from tests import quiz
from tests.runs.run_data import quiz_models

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"


def example_run_file(folder: Path) -> None:
    """The documented example as it is (its dataset uploaded by the command), with the
    test's models."""
    for name in ("prompt.txt", "metric.py", "capitals.jsonl"):
        shutil.copy(EXAMPLES / name, folder / name)
    text = (EXAMPLES / "run.toml").read_text()
    for old, new in (
        ("openai/gpt-4.1-nano", "openai/test-gpt"),
        ("openai/gpt-4.1-mini", "openai/test-gpt"),
    ):
        assert old in text
        text = text.replace(old, new)
    (folder / "run.toml").write_text(text)


def test_a_run_file_is_submitted_watched_to_its_end_and_downloaded(
    cli, owner, celery_worker_process, session_models, tmp_path
):
    assert (EXAMPLES / "capitals.jsonl").read_bytes() == quiz.jsonl()
    example_run_file(tmp_path)

    with quiz_models(session_models):
        code, run = cli.json("run", "submit", "run.toml", "--watch", timeout=120)
    assert code == 0, run
    assert (run["status"], run["final"], run["has_result"]) == ("finished", True, True)
    stored = Run.objects.get(pk=run["id"], owner=owner)
    assert stored.status == "finished" and stored.dataset.owner == owner
    assert bytes(stored.dataset.raw) == quiz.jsonl()
    assert stored.config["artifact"]["content"] == (EXAMPLES / "prompt.txt").read_text()
    assert run["progress"]["best_score"] == stored.result["best"]["val_mean"] == 1.0
    assert run["page"].endswith(f"/runs/{run['id']}/")

    # Watching a run that has ended answers at once, with the same exit code.
    watched = cli("run", "watch", str(run["id"]))
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.startswith("FINISHED") and run["page"] in watched.stdout

    saved = cli("run", "download", str(run["id"]))
    assert saved.returncode == 0, saved.stderr
    with zipfile.ZipFile(tmp_path / f"run-{run['id']}.zip") as archive:
        assert archive.read("metric.py").decode() == (EXAMPLES / "metric.py").read_text()
        assert json.loads(archive.read("result.json")) == stored.result

    missing = cli("run", "download", "987654", "-o", "none.zip")
    assert missing.returncode == 2 and "nothing here" in missing.stderr
    assert not (tmp_path / "none.zip").exists()
