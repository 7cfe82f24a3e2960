"""skynet.toml, as `skynet init` writes it: `skynet check` and `skynet evaluate` read it
with no flags (against the live server, worker and Redis), a flag wins over it, a typo in
it stops the command naming the nearest key, and init neither overwrites nor half-writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluations.models import Evaluation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"


def _examples(folder: Path) -> None:
    for name in ("metric.py", "outputs.jsonl"):
        shutil.copy(EXAMPLES / name, folder / name)


def test_init_then_check_and_evaluate_with_no_flags(cli, celery_worker_process, tmp_path):
    _examples(tmp_path)
    done = cli(
        "init", "--data", "outputs.jsonl", "--column", "capital=expected", "--min-mean", "0.8"
    )
    assert done.returncode == 0, done.stderr
    assert "skynet check --junit check.xml" in done.stdout
    cases = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    assert cases[0] == {
        "input": {"country": "France"},
        "output": "Paris",
        "expected": {"capital": "Paris"},
    }
    assert len(cases) == 3 and cases[2]["expected"] == {"capital": "Nairobi"}

    check = cli("check")
    assert check.returncode == 0, check.stdout + check.stderr
    code, evaluation = cli.json("evaluate")
    assert code == 0, evaluation
    assert evaluation["summary"]["cases"] == 12 and evaluation["gate"]["min_mean"] == 0.8
    stored = Evaluation.objects.get(pk=evaluation["id"])
    assert stored.roles["capital"] == "output" and stored.recorded_column == "output"
    # A flag wins over the file.
    stricter = cli("evaluate", "--min-mean", "0.95")
    assert stricter.returncode == 1 and "below --min-mean 0.95" in stricter.stdout


def test_a_typo_in_skynet_toml_names_the_nearest_key(cli, tmp_path):
    _examples(tmp_path)
    (tmp_path / "skynet.toml").write_text(
        '[metric]\npath = "metric.py"\n[evaluate]\ndata = "outputs.jsonl"\nmin_means = 0.8\n'
    )
    done = cli("evaluate")
    assert done.returncode == 2
    assert "unknown key [evaluate] min_means. Did you mean min_mean?" in done.stderr
    (tmp_path / "skynet.toml").write_text('[metric]\npath = "metric.py"\n[check]\ntimeout = 0\n')
    done = cli("check")
    assert done.returncode == 2 and "[check] timeout: must lie between 1 and 600" in done.stderr


def test_without_a_file_or_arguments_it_says_what_is_needed(cli, tmp_path):
    done = cli("check")
    assert done.returncode == 2 and "METRIC is needed" in done.stderr
    missing = cli("check", "--project", "elsewhere.toml")
    assert missing.returncode == 2 and "elsewhere.toml is not found" in missing.stderr


def test_init_overwrites_nothing_unless_forced(cli, tmp_path):
    _examples(tmp_path)
    (tmp_path / "cases.jsonl").write_text("mine\n")
    done = cli("init", "--data", "outputs.jsonl")
    assert done.returncode == 2 and "cases.jsonl exists already" in done.stderr
    # Nothing half-written: skynet.toml was not made either.
    assert not (tmp_path / "skynet.toml").exists()
    assert (tmp_path / "cases.jsonl").read_text() == "mine\n"
    forced = cli("init", "--data", "outputs.jsonl", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "cases.jsonl").read_text() != "mine\n"
    # No column named like a reference: it says so.
    assert "No column is the expected value" in forced.stderr
