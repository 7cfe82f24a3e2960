"""The committed code editor bundle matches the committed npm lock file, and stays small.

static/editor/editor.js is built by editor/build.sh from editor/ and the exact versions in
editor/package.json / editor/package-lock.json; it is committed so the site runs without
Node.
These checks need no browser, no Node and no database.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_JSON = ROOT / "editor" / "package.json"
LOCK = ROOT / "editor" / "package-lock.json"
BUNDLE = ROOT / "static" / "editor" / "editor.js"

GZIP_LIMIT = 250_000  # bytes
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
DEPENDENCY_FIELDS = (
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
)


def _package() -> dict:
    return json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))


def _declared(package: dict) -> dict[str, str]:
    declared: dict[str, str] = {}
    for field in DEPENDENCY_FIELDS:
        declared.update(package.get(field) or {})
    return declared


def test_bundle_banner_names_the_committed_lock_file():
    first_line = BUNDLE.read_text(encoding="utf-8").split("\n", 1)[0]
    assert first_line.startswith("/*") and first_line.endswith("*/"), first_line[:200]
    match = re.search(r"package-lock\.json sha256=([0-9a-f]{64})\b", first_line)
    assert match, f"no 'package-lock.json sha256=<hex>' in the banner: {first_line[:200]}"
    expected = hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert match.group(1) == expected, (
        "static/editor/editor.js was built from another package-lock.json: "
        "rebuild with `bash scripts/build_editor.sh` and commit the result"
    )


def test_bundle_is_an_iife_exposing_skynet_editor():
    text = BUNDLE.read_text(encoding="utf-8")
    body = text.split("\n", 1)[1]
    assert body.startswith("var SkynetEditor=(()=>{")
    for name in ("skynet:save", "skynet:run", "skynet:dirty", "skynet:diagnostics"):
        assert name in body, name


def test_package_json_pins_exact_versions():
    declared = _declared(_package())
    assert declared, "package.json declares no dependencies"
    loose = {name: spec for name, spec in declared.items() if not EXACT_VERSION.match(spec)}
    assert not loose, f"package.json must pin exact versions (no ^, ~, *, ranges): {loose}"


def test_lock_file_agrees_with_package_json():
    package = _package()
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    root = lock["packages"][""]
    for field in DEPENDENCY_FIELDS:
        assert (root.get(field) or {}) == (package.get(field) or {}), (
            f"package-lock.json is out of date for {field}: run `npm install` and rebuild"
        )
    for name, version in _declared(package).items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name


def test_gzipped_bundle_is_small():
    size = len(gzip.compress(BUNDLE.read_bytes(), compresslevel=9))
    assert size < GZIP_LIMIT, f"editor.js is {size} bytes gzipped (limit {GZIP_LIMIT})"
