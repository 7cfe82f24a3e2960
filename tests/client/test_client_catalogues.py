"""The command line's own words in Spanish and Hindi: every sentence marked in
client/skynet_client is in both catalogues, translated, not fuzzy, with the placeholders of
its msgid; the committed .mo files are the .po files compiled; and a command speaks the
language asked for (--language, else LANG), its server words and its own alike."""

from __future__ import annotations

import gettext
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import polib
import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location(
    "client_catalogue", ROOT / "scripts" / "client_catalogue.py"
)
catalogue_tool = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(catalogue_tool)
PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


@pytest.mark.parametrize("language", ["es", "hi"])
def test_every_marked_sentence_is_translated(language):
    marked = catalogue_tool.extract()
    assert len(marked) > 100  # the tool still finds the marks
    po = catalogue_tool.catalogue(language)
    entries = {entry.msgid: entry for entry in po}
    assert set(entries) == set(marked), "run scripts/client_catalogue.py"
    wrong = []
    for msgid, plural in marked.items():
        entry = entries[msgid]
        assert "fuzzy" not in entry.flags, msgid
        if plural is None:
            assert entry.msgstr, f"not translated: {msgid!r}"
            if placeholders(entry.msgstr) != placeholders(msgid):
                wrong.append((msgid, entry.msgstr))
        else:
            assert entry.msgid_plural == plural
            for form in entry.msgstr_plural.values():
                assert form, f"not translated: {msgid!r}"
                if placeholders(form) != placeholders(plural):
                    wrong.append((msgid, form))
    assert wrong == []
    assert (
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "client_catalogue.py"), "--check"]
        ).returncode
        == 0
    )


@pytest.mark.parametrize("language", ["es", "hi"])
def test_the_committed_mo_is_the_po_compiled(language, tmp_path):
    folder = catalogue_tool.LOCALE / language / "LC_MESSAGES"
    fresh = tmp_path / "skynet.mo"
    polib.pofile(str(folder / "skynet.po")).save_as_mofile(str(fresh))
    with open(folder / "skynet.mo", "rb") as committed, open(fresh, "rb") as rebuilt:
        old, new = gettext.GNUTranslations(committed), gettext.GNUTranslations(rebuilt)
    assert old._catalog == new._catalog


def test_a_usage_error_is_said_in_the_language_asked_for(tmp_path):
    def run(*args: str, **env: str):
        return subprocess.run(
            [sys.executable, "-m", "skynet_client", *args],
            cwd=tmp_path,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONIOENCODING": "utf-8",
                **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
                **env,
            },
            capture_output=True,
            text=True,
            timeout=60,
        )

    english = run("check", "--token", "skn_x")
    spanish = run("check", "--token", "skn_x", "--language", "es")
    hindi = run("check", "--token", "skn_x", LANG="hi_IN.UTF-8")
    assert english.returncode == spanish.returncode == hindi.returncode == 2
    assert "METRIC is needed" in english.stderr
    for other in (spanish, hindi):
        assert "METRIC" in other.stderr and "is needed" not in other.stderr, other.stderr
    assert hindi.stderr != spanish.stderr


def _words(language: str) -> gettext.GNUTranslations:
    return gettext.translation("skynet", catalogue_tool.LOCALE, languages=[language])


@pytest.mark.django_db(transaction=True)
@pytest.mark.integration
def test_the_lines_of_a_check_and_an_evaluation_are_in_the_readers_language(
    cli, celery_worker_process, tmp_path
):
    from tests.client.test_client_check import FAILING
    from tests.client.test_client_evaluate import write_data
    from tests.evaluations.evaluation_data import LABEL_METRIC

    (tmp_path / "metric.py").write_text(FAILING)
    spanish = _words("es")
    check = cli("check", "metric.py", "--language", "es")
    assert check.returncode == 1
    assert check.stdout.startswith(spanish.gettext("FAILED") + "\n"), check.stdout
    assert "FAILED" not in check.stdout
    fix = spanish.gettext("fix: {text}").split("{")[0]
    assert fix.strip() and fix in check.stdout

    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    write_data(tmp_path / "tickets.csv")
    hindi = _words("hi")
    done = cli("evaluate", "metric.py", "tickets.csv", "--all", LANG="hi_IN.UTF-8")
    assert done.returncode == 1
    assert done.stdout.startswith(hindi.gettext("FAILED") + "  ")
    counts = hindi.ngettext(
        "{valid} valid, {invalid} not valid of {cases} case",
        "{valid} valid, {invalid} not valid of {cases} cases",
        30,
    ).format(valid=27, invalid=3, cases=30)
    assert f"  {counts} (" in done.stdout, done.stdout
    # The server's words are in Hindi too: the verdict is the page's.
    assert "30 में से 3" in done.stdout.splitlines()[0]
    assert done.stderr and cli.token not in done.stdout + done.stderr
