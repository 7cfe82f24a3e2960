"""The `skynet` command line's catalogues: find every sentence marked in client/skynet_client
(`_("…")` and `ngettext("…", "…", n)`), bring client/skynet_client/locale/<lang>/LC_MESSAGES/
skynet.po up to date with them (new ones empty, ones no longer marked dropped) and compile
each to its .mo, which is committed so that installing needs no gettext.

    .venv/bin/python scripts/client_catalogue.py        # refresh and compile
    .venv/bin/python scripts/client_catalogue.py --check  # exit 1 when not up to date

The suite (tests/client/test_client_catalogues.py) fails on a marked sentence that is not
translated, a fuzzy one, a placeholder that differs, or a .mo that is not the .po compiled.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "client" / "skynet_client"
LOCALE = PACKAGE / "locale"
LANGUAGES = {"es": "nplurals=2; plural=(n != 1);", "hi": "nplurals=2; plural=(n != 1);"}


def extract(package: Path = PACKAGE) -> dict[str, str | None]:
    """Each marked msgid, in the order the files first mark it, with its plural or None."""
    found: dict[str, str | None] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            texts = [t for t in texts if isinstance(t, str)]
            if node.func.id == "_" and len(node.args) == 1 and len(texts) == 1:
                found.setdefault(texts[0], None)
            elif node.func.id == "ngettext" and len(texts) == 2:
                found.setdefault(texts[0], texts[1])
    return found


def catalogue(language: str) -> polib.POFile:
    path = LOCALE / language / "LC_MESSAGES" / "skynet.po"
    if path.exists():
        return polib.pofile(str(path), wrapwidth=79)
    po = polib.POFile(wrapwidth=79)
    po.metadata = {
        "Project-Id-Version": "skynet-client",
        "Language": language,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": LANGUAGES[language],
    }
    return po


def refreshed(language: str, marked: dict[str, str | None]) -> polib.POFile:
    po = catalogue(language)
    known = {entry.msgid: entry for entry in po}
    for entry in list(po):
        if entry.msgid not in marked or entry.obsolete:
            po.remove(entry)
    for msgid, plural in marked.items():
        entry = known.get(msgid)
        if entry is None or (entry.msgid_plural or None) != plural:
            if entry is not None:
                po.remove(entry)
            entry = polib.POEntry(msgid=msgid, msgstr="")
            if plural is not None:
                entry.msgid_plural = plural
                entry.msgstr_plural = {0: "", 1: ""}
            po.append(entry)
        if "{" in msgid and "python-brace-format" not in entry.flags:
            entry.flags.append("python-brace-format")
    return po


def main(argv: list[str]) -> int:
    marked = extract()
    stale = []
    for language in LANGUAGES:
        po = refreshed(language, marked)
        folder = LOCALE / language / "LC_MESSAGES"
        text = str(po)
        path = folder / "skynet.po"
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        po.save_as_mofile(str(folder / "skynet.mo"))
        left = len(po.untranslated_entries()) + len(po.fuzzy_entries())
        print(f"{path.relative_to(ROOT)}: {len(marked)} sentences, {left} to translate")
    if stale:
        print("Not up to date:", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
