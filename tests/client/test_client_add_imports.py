"""`skynet check` on a metric pasted without its imports, through the real worker: it
says what is missing, and --add-imports fixes the file and checks it."""

from __future__ import annotations

import pytest

from tests.checks.test_add_imports import FIXED_IMPORTS, PASTED


@pytest.mark.django_db(transaction=True)
@pytest.mark.integration
def test_skynet_check_says_what_is_missing_and_add_imports_fixes_the_file(
    cli, celery_worker_process, tmp_path
):
    metric = tmp_path / "metric.py"
    metric.write_text(PASTED)
    failed = cli("check", "metric.py")
    assert failed.returncode == 1, failed.stderr
    assert "3 names are used but never imported: dataclass, Counter, re." in failed.stdout
    assert "add `from dataclasses import dataclass`" in failed.stdout
    assert "fix: Add the 3 missing imports: --add-imports" in failed.stdout
    assert metric.read_text() == PASTED

    done = cli("check", "metric.py", "--add-imports")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "PASSED"
    assert "Added 3 imports: import re;" in done.stderr
    fixed = metric.read_text()
    assert [
        line for line in fixed.splitlines() if line.startswith(("import", "from"))
    ] == FIXED_IMPORTS
    assert fixed.endswith(PASTED.split('"""\n', 2)[-1])  # the rest as it was
