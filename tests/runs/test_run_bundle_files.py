"""A run of a metric in several files: the wizard's check runs the saved version with its
helper modules, and the run's bundle holds them beside metric.py, at their paths, so the
bundle's metric imports them as it did in the repository."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile

import pytest

from checks.models import Check
from metrics import services as metric_services
from runs import bundle
from runs.models import Run
from submissions import rules
from tests.submissions.test_submit_wizard import fill_to_check, run_check_now

pytestmark = pytest.mark.django_db

METRIC = """\
from labels.match import matches


def score(input, output, expected=None):
    if expected is None:
        return 0.0, {"feedback": "This case has no expected label to compare with."}
    if matches(output, expected["label"]):
        return 1.0, {"feedback": f"Correct: the label is {expected['label']!r}."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""
FILES = {
    "labels/__init__.py": "",
    "labels/match.py": (
        "from .text import norm\n\n\ndef matches(output, label):\n"
        "    return norm(label) in norm(output)\n"
    ),
    "labels/text.py": "def norm(value):\n    return str(value).strip().lower()\n",
}


@pytest.fixture
def version_with_files(owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=METRIC, files=FILES)
    return version


def test_the_bundle_holds_the_helper_files_beside_metric_py(
    owner_client,
    draft,
    version_with_files,
    session_models,
    django_capture_on_commit_callbacks,
    tmp_path,
):
    fill_to_check(owner_client, draft, version_with_files)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.files == FILES
    assert check.status == Check.Status.PASSED, check.result
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    run = Run.objects.get()
    response = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = set(archive.namelist())
    assert set(FILES) | {"metric.py", "dspy_metric.py", "skynet/returns.py"} <= names
    for path, text in FILES.items():
        assert archive.read(path).decode() == text
    # Unpacked, metric.py imports its helpers as in the repository.
    archive.extractall(tmp_path / "bundle")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from metric import score; print(score({}, ' Billing ', {'label': 'billing'})[0])",
        ],
        cwd=tmp_path / "bundle",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "1.0", done.stderr


def test_a_metric_without_files_has_a_bundle_without_them(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.files is None
    names = zipfile.ZipFile(io.BytesIO(bundle.for_draft(draft))).namelist()
    assert not [
        name
        for name in names
        if name.endswith(".py") and "/" in name and not name.startswith("skynet/")
    ]


def test_the_drafts_check_goes_stale_when_only_the_files_change(
    owner_client, draft, version_with_files, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, version_with_files)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    before = rules.DraftState(draft).fingerprint
    changed, _ = metric_services.metric_save(
        version_with_files.metric,
        source=METRIC,
        files={**FILES, "labels/text.py": "def norm(value):\n    return str(value)\n"},
    )
    draft.metric_version = changed
    draft.save(update_fields=["metric_version"])
    assert rules.DraftState(draft).fingerprint != before
