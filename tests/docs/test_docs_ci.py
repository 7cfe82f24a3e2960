"""The "From CI" page stays true: its CI jobs are YAML that parses, the same in every
language, and every `skynet` command line on the page uses a command and options that the
command line's own --help lists."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys

import pytest
import yaml
from markdown_it import MarkdownIt

import skynet_client
from docs_site import pages

SLUG = "guides/from-ci"
WHEEL = f"skynet_client-{skynet_client.__version__}-py3-none-any.whl"
# `skynet run` has commands of its own (submit, watch, download).
GROUPS = ("run",)


def fences(language: str, info: str) -> list[str]:
    text = (pages.DOCS_DIR / language / f"{SLUG}.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(text)
    return [t.content for t in tokens if t.type == "fence" and t.info.strip() == info]


def skynet_lines(language: str) -> list[list[str]]:
    """Every `skynet ...` command on the page: in shell blocks and in the CI jobs."""
    lines = []
    for block in fences(language, "sh"):
        lines += [line for line in block.splitlines() if line.startswith("skynet ")]
    for job in (yaml.safe_load(block) for block in fences(language, "yaml")):
        lines += [line for line in commands_of(job) if line.startswith("skynet ")]
    return [shlex.split(line) for line in lines]


def commands_of(job: dict) -> list[str]:
    """The shell lines a GitHub Actions workflow or a GitLab CI file runs."""
    if "jobs" in job:
        return [step["run"] for each in job["jobs"].values() for step in each["steps"] if "run" in step]
    return [line for each in job.values() for line in each["script"]]


@functools.cache
def help_of(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "skynet_client", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_page_has_a_github_and_a_gitlab_job_that_parse():
    github, gitlab = (yaml.safe_load(block) for block in fences("en", "yaml"))
    # YAML 1.1 reads the key `on` as true.
    assert github[True] == "push"
    (job,) = github["jobs"].values()
    assert job["env"] == {
        "SKYNET_URL": "${{ secrets.SKYNET_URL }}",
        "SKYNET_TOKEN": "${{ secrets.SKYNET_TOKEN }}",
    }
    for runs in (commands_of(github), commands_of(gitlab)):
        # The client the workbench serves, of the version client/ holds.
        assert runs[0] == f'pip install "$SKYNET_URL/client/{WHEEL}"'
        assert runs[1:] == [
            "skynet check metric.py --cases cases.jsonl --junit check.xml",
            "skynet evaluate metric.py outputs.jsonl --column capital=expected --min-mean 0.8"
            " --junit evaluation.xml",
        ]
    # Both keep the JUnit reports, whether the steps passed or not.
    (job,) = github["jobs"].values()
    keep = job["steps"][-1]
    assert keep["if"] == "always()" and keep["with"]["path"] == "*.xml"
    assert gitlab["metric"]["artifacts"] == {"when": "always", "reports": {"junit": "*.xml"}}


@pytest.mark.parametrize("language", [code for code in pages.LANGUAGES if code != "en"])
def test_every_language_shows_the_same_code(language):
    for info in ("yaml", "sh"):
        assert fences(language, info) == fences("en", info)


def test_the_commands_on_the_page_are_ones_the_command_line_has():
    used = skynet_lines("en")
    assert {"check", "login", "evaluate", "run"} <= {line[1] for line in used}
    listed = help_of()
    for line in used:
        command = line[1]
        assert command in listed, f"skynet --help does not list {command}"
        if command in GROUPS:
            assert line[2] in help_of(command), f"skynet {command} --help does not list {line[2]}"
            command, words = f"{command} {line[2]}", line[3:]
        else:
            words = line[2:]
        options = help_of(*command.split())
        for word in words:
            option = word.partition("=")[0]
            if option.startswith("--"):
                listed_option = re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", options)
                assert listed_option, f"skynet {command} --help does not list {option}"


@pytest.mark.django_db
@pytest.mark.parametrize("language", pages.LANGUAGES)
def test_the_tokens_page_links_to_this_page_in_the_readers_language(owner_client, language):
    body = owner_client.get(f"/{language}/accounts/tokens/").content.decode()
    link = f'href="/docs/{language}/{SLUG}"'
    assert link in body
    assert owner_client.get(f"/docs/{language}/{SLUG}").status_code == 200


def test_the_readmes_ci_job_parses_and_runs_the_same_commands():
    readme = (pages.DOCS_DIR.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## From CI\n", 1)[1].split("\n## ", 1)[0]
    tokens = MarkdownIt("commonmark").parse(section)
    (block,) = [t.content for t in tokens if t.type == "fence" and t.info.strip() == "yaml"]
    runs = commands_of(yaml.safe_load(block))
    github = commands_of(yaml.safe_load(fences("en", "yaml")[0]))
    assert [line.split("#")[0].strip() for line in runs] == github
