"""`skynet evaluate --baseline REF` against the live server, worker and Redis: versions
named by labels (given, or a CI job's commit and branch), the baseline's evaluation
reused when its settings match and run when none does, and the job failed when a case
that was valid is not now or the mean fell more than --max-drop."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evaluations.models import Evaluation
from metrics.models import Metric, VersionLabel

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"
FIRST = (EXAMPLES / "metric.py").read_text()
# Raises on the one answer that named the wrong city: a case valid before breaks.
BREAKS = FIRST.replace(
    "def score(input, output, expected):\n",
    'def score(input, output, expected):\n    if output == "Toronto":\n'
    '        raise ValueError("no Toronto")\n',
)
# Scores Tokyo 0: every case still valid, the mean falls by 1/12.
HARSHER = FIRST.replace(
    'if str(output).strip() == expected["capital"]:',
    'if str(output).strip() == expected["capital"] and output != "Tokyo":',
)
ARGS = ("evaluate", "metric.py", "outputs.jsonl", "--column", "capital=expected", "--all")


def _folder(tmp_path: Path, source: str) -> None:
    shutil.copy(EXAMPLES / "outputs.jsonl", tmp_path / "outputs.jsonl")
    (tmp_path / "metric.py").write_text(source)


def test_a_version_compared_with_the_one_main_was_at(cli, celery_worker_process, tmp_path):
    _folder(tmp_path, FIRST)
    # In a CI job the version is named by its commit and its branch.
    first = cli(*ARGS, GITHUB_SHA="0123456789abcdef0123", GITHUB_REF_NAME="main")
    assert first.returncode == 0, first.stdout + first.stderr
    metric = Metric.objects.get()
    assert set(VersionLabel.objects.filter(version__number=1).values_list("name", flat=True)) == {
        "0123456789ab",
        "main",
    }

    _folder(tmp_path, BREAKS)
    code, document = cli.json(*ARGS, "--max-invalid", "1", "--baseline", "main", "--label", "pr-7")
    assert code == 1, document
    assert document["gate"]["reason"] == "case_broke"
    base = document["baseline"]
    assert (base["version"], base["reused"], base["broke"]) == (1, True, 1)
    (worse,) = base["worse"]
    assert (worse["before"]["status"], worse["now"]["status"]) == ("valid", "error")
    assert Evaluation.objects.filter(metric_version__number=1).count() == 1  # reused
    assert VersionLabel.objects.get(name="pr-7").version.number == 2

    text = cli(*ARGS, "--max-invalid", "1", "--baseline", "main")
    assert text.stdout.startswith("FAILED  1 case valid under version 1 is not valid now")
    assert "  baseline: version 1, evaluation " in text.stdout and "(reused)" in text.stdout
    assert "case 5 (row 5): valid 0 → error —" in text.stdout, text.stdout
    assert "      before: The output must be the city name only" in text.stdout

    # Every case valid, the mean down by 1/12: past --max-drop 0, within 0.1.
    _folder(tmp_path, HARSHER)
    dropped = cli(*ARGS, "--baseline", "1")
    assert dropped.returncode == 1
    assert dropped.stdout.startswith("FAILED  the mean fell from 0.8333 (version 1) to 0.75")
    assert "; 11 of 12 cases scored the same" in dropped.stdout
    allowed = cli(*ARGS, "--baseline", "1", "--max-drop", "0.1")
    assert allowed.returncode == 0, allowed.stdout
    # latest-passed: the newest other version whose evaluation of these rows passed.
    latest = cli(*ARGS, "--baseline", "latest-passed", "--max-drop", "0.1", "--json")
    assert latest.returncode == 0
    assert '"version": 1' in latest.stdout
    assert Metric.objects.get() == metric


def test_on_the_branch_it_names_an_unchanged_metric_has_nothing_to_compare(
    cli, celery_worker_process, tmp_path
):
    _folder(tmp_path, FIRST)
    assert cli(*ARGS, GITHUB_REF_NAME="main").returncode == 0
    # The next push to main: the label named version 1 before this run, which is version 1.
    again = cli(*ARGS, "--baseline", "main", GITHUB_REF_NAME="main")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "The baseline 'main' is this very version: nothing to compare." in again.stderr
    # A changed metric pushed to main is compared with where main was, then takes the label.
    _folder(tmp_path, HARSHER)
    changed = cli(*ARGS, "--baseline", "main", GITHUB_REF_NAME="main")
    assert changed.returncode == 1 and "(version 1)" in changed.stdout
    assert VersionLabel.objects.get(name="main").version.number == 2


def test_a_baseline_with_no_evaluation_of_these_rows_is_scored_now(
    cli, celery_worker_process, tmp_path
):
    _folder(tmp_path, FIRST)
    assert cli(*ARGS[:-1], "--sample", "6", "--label", "v1").returncode == 0
    _folder(tmp_path, HARSHER)
    # Every row now: the sample's evaluation scored other cases, so it cannot be reused.
    done = cli(*ARGS, "--baseline", "v1", "--max-drop", "0.5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Baseline: version 1, scoring the dataset with it now." in done.stderr
    assert Evaluation.objects.filter(metric_version__number=1).count() == 2


def test_a_baseline_that_names_nothing_exits_2(cli, celery_worker_process, tmp_path):
    _folder(tmp_path, FIRST)
    done = cli(*ARGS, "--baseline", "nowhere")
    assert done.returncode == 2 and "carries the label 'nowhere'" in done.stderr
    # Nothing was saved for a command that could not be done.
    assert not Metric.objects.exists()
    none_passed = cli(*ARGS, "--baseline", "latest-passed")
    assert none_passed.returncode == 2 and "no latest-passed baseline" in none_passed.stderr
    bad = cli(*ARGS, "--label", "no spaces please")
    assert bad.returncode == 2 and "cannot be a label" in bad.stderr
