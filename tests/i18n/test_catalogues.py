"""The Spanish and Hindi catalogues are complete, exact, compiled, and up to date."""

from __future__ import annotations

import gettext
import re
import shutil
import subprocess
import sys

import polib
import pytest

from tests.conftest import ROOT

LANGUAGES = ("es", "hi")
PLACEHOLDER = re.compile(r"%\((\w+)\)[sdfr]|\{\{\s*(\w+)\s*\}\}")


def catalogue(language: str) -> polib.POFile:
    return polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.po"))


def placeholders(text: str) -> list[str]:
    return sorted(a or b for a, b in PLACEHOLDER.findall(text))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_entry_is_translated_and_none_is_fuzzy(language):
    po = catalogue(language)
    assert po.untranslated_entries() == []
    assert [entry.msgid for entry in po.fuzzy_entries()] == []
    assert "fuzzy" not in po.metadata_as_entry().flags


@pytest.mark.parametrize("language", LANGUAGES)
def test_placeholders_match_the_msgid(language):
    wrong = []
    for entry in catalogue(language).translated_entries():
        if entry.msgid_plural:
            expected = placeholders(entry.msgid_plural)
            translations = entry.msgstr_plural.values()
        else:
            expected = placeholders(entry.msgid)
            translations = [entry.msgstr]
        for translation in translations:
            if placeholders(translation) != expected:
                wrong.append((entry.msgid, translation))
    assert wrong == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_committed_mo_file_is_the_compiled_po_file(language, tmp_path):
    """Recompile with a pure-Python compiler and compare what each .mo file says, so a
    .po edit without `compilemessages` fails here (and set-up needs no gettext)."""
    directory = ROOT / "locale" / language / "LC_MESSAGES"
    fresh = tmp_path / "django.mo"
    catalogue(language).save_as_mofile(str(fresh))
    with open(directory / "django.mo", "rb") as committed, open(fresh, "rb") as rebuilt:
        old, new = gettext.GNUTranslations(committed), gettext.GNUTranslations(rebuilt)
    # The header entry ("") differs only in the order of its fields; compare it parsed.
    for key in ("content-type", "plural-forms", "language"):
        assert old.info().get(key) == new.info().get(key), key
    assert {k: v for k, v in old._catalog.items() if k != ""} == {
        k: v for k, v in new._catalog.items() if k != ""
    }


def test_every_marked_string_is_in_the_catalogues(tmp_path):
    """Run makemessages into a scratch copy: a string marked in code or a template but
    missing from the committed catalogues fails here."""
    if shutil.which("xgettext") is None:
        pytest.skip("GETTEXT MISSING: install gettext to compare the catalogues with the code")
    scratch = tmp_path / "project"
    shutil.copytree(
        ROOT,
        scratch,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "node_modules", "var", "test-artifacts", "staticfiles", "__pycache__"
        ),
    )
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", *MAKEMESSAGES_ARGS],
        cwd=scratch,
        check=True,
        capture_output=True,
    )
    for language in LANGUAGES:
        fresh = polib.pofile(str(scratch / "locale" / language / "LC_MESSAGES" / "django.po"))
        committed = {(e.msgctxt, e.msgid) for e in catalogue(language) if not e.obsolete}
        missing = sorted(
            e.msgid for e in fresh if not e.obsolete and (e.msgctxt, e.msgid) not in committed
        )
        assert missing == [], f"run makemessages and translate these for {language}"


# What the catalogues are made from; README's translation section runs the same.
MAKEMESSAGES_ARGS = [
    "-l",
    "es",
    "-l",
    "hi",
    "--ignore=var",
    "--ignore=tests",
    "--ignore=runtime",
    "--ignore=contract",
    "--ignore=sandbox",
    "--ignore=engines",
    "--ignore=scripts",
    "--ignore=node_modules",
    "--ignore=editor",
    "--ignore=providers",
    "--ignore=static",
    "--ignore=docs",
    "--ignore=dataset_files",
]


def test_the_review_prompt_can_answer_in_every_interface_language():
    """providers.review names the answer's language to the model in its own (English)
    prompt; the Django-free core cannot read settings, so this holds the two together."""
    from django.conf import settings
    from django.utils import translation

    from providers.review import LANGUAGES as REVIEW_LANGUAGES

    with translation.override("en"):
        interface = {code: str(name) for code, name in settings.LANGUAGES}
    assert interface == REVIEW_LANGUAGES


def test_spanish_names_the_product_taller():
    """The product is "el taller" in Spanish, on the pages as in the docs: no sentence leaves
    it in English."""
    left = [
        entry.msgid
        for entry in catalogue("es").translated_entries()
        if "workbench" in " ".join([entry.msgstr, *entry.msgstr_plural.values()])
    ]
    assert left == []
