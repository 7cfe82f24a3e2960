"""CODES lists every code the package can raise or warn, for the translation layer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import dataset_files
from dataset_files import CODES, ERROR_CODES, PARAM_CODES, WARNINGS

SOURCE = Path(dataset_files.__file__).parent
RAISED = re.compile(r'DatasetError\(\s*"([a-z_]+)"')
WARNED = re.compile(r'\{"code": "([a-z_]+)"')


def _found(pattern: re.Pattern) -> set[str]:
    return {code for path in SOURCE.glob("*.py") for code in pattern.findall(path.read_text())}


def test_every_raised_code_is_listed():
    raised = _found(RAISED)
    assert raised == set(ERROR_CODES)


def test_every_warning_code_is_listed():
    assert _found(WARNED) == set(WARNINGS)


def test_codes_are_unique_identifiers():
    assert len(CODES) == len(set(CODES))
    assert all(re.fullmatch(r"[a-z][a-z_]*", code) for code in CODES)
    for code, params in PARAM_CODES.items():
        assert code in CODES
        for values in params.values():
            assert len(values) == len(set(values))


def test_the_package_does_not_import_django():
    code = "import sys, dataset_files; sys.exit('django' in sys.modules)"
    root = SOURCE.parent
    assert subprocess.run([sys.executable, "-c", code], cwd=root, check=False).returncode == 0
