"""The commands of the docs' "Check metrics from CI" page and of the README run as
written, in a folder holding `client/examples/`, against the live server, the real worker
and Redis: the client installed from the workbench's own wheel by the jobs' pip line, then
each command exits 0, and the JUnit reports the CI jobs keep are there and valid."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from docs_site import pages
from tests.client.test_client_reports import SCHEMA
from tests.docs.test_docs_ci import commands_of, fences, skynet_lines

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "client" / "examples"


def page_commands() -> list[list[str]]:
    """The page's check and evaluate lines (its shell blocks and CI jobs), each once, but
    those that read skynet.toml (run after the page's `skynet init`, below)."""
    seen, found = set(), []
    for words in skynet_lines("en"):
        if len(words) == 2:
            continue
        if words[1] in ("check", "evaluate") and tuple(words) not in seen:
            seen.add(tuple(words))
            found.append(words)
    return found


def test_the_pages_ci_commands_run_as_written_on_the_examples(cli, celery_worker_process, tmp_path):
    for example in EXAMPLES.iterdir():
        shutil.copy(example, tmp_path / example.name)
    commands = page_commands()
    assert {words[1] for words in commands} == {"check", "evaluate"}
    # The GitHub job's own lines are among them.
    github = commands_of(yaml.safe_load(fences("en", "yaml")[0]))
    assert {line for line in github if line.startswith("skynet ")} <= {
        shlex.join(words) for words in commands
    }
    # The jobs' first line installs the workbench's own client; those are the commands run.
    (install,) = {line for line in github if line.startswith("pip install ")}
    site = tmp_path / "site"
    pip = install.replace(
        "pip install", f"{sys.executable} -m pip install --no-deps --target {site}"
    )
    installed = subprocess.run(
        pip, shell=True, env=cli.env(), capture_output=True, text=True, timeout=120
    )
    assert installed.returncode == 0, installed.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import skynet_client; print(skynet_client.__file__)"],
        env=cli.env(PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(site)), where.stdout
    for words in commands:
        # As on the main branch of a GitHub Actions job: each version gets the label main.
        done = cli(*words[1:], PYTHONPATH=str(site), GITHUB_REF_NAME="main")
        assert done.returncode == 0, (words, done.stdout, done.stderr)
        assert "/checks/" in done.stdout or "/evaluations/" in done.stdout
    for report in ("check.xml", "evaluation.xml"):
        SCHEMA.validate(str(tmp_path / report))
    readme = (pages.DOCS_DIR.parent / "README.md").read_text(encoding="utf-8")
    assert "skynet evaluate metric.py outputs.jsonl --column capital=expected" in readme


def test_without_the_column_the_command_says_which_one_to_name(
    cli, celery_worker_process, tmp_path
):
    for example in EXAMPLES.iterdir():
        shutil.copy(example, tmp_path / example.name)
    done = cli("evaluate", "metric.py", "outputs.jsonl")
    assert done.returncode == 1
    hint = "No column is the expected value, so the metric gets expected=None."
    assert hint in done.stderr and "--column capital=expected" in done.stderr
    assert "  hint: " + hint in done.stdout


def test_the_pages_project_file_lines_run_as_written(cli, celery_worker_process, tmp_path):
    """The shell block with `skynet init`, line by line, in a folder with the metric and
    the recorded outputs only: init writes skynet.toml and cases.jsonl, and check and
    evaluate then need no flags."""
    for name in ("metric.py", "outputs.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (block,) = [b for b in fences("en", "sh") if "skynet init" in b]
    lines = [shlex.split(line) for line in block.splitlines() if line.startswith("skynet ")]
    assert [words[1] for words in lines] == ["init", "check", "evaluate"]
    for words in lines:
        done = cli(*words[1:])
        assert done.returncode == 0, (words, done.stdout, done.stderr)
    assert (tmp_path / "skynet.toml").exists() and (tmp_path / "cases.jsonl").exists()
