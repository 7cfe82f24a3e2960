"""A worker whose machine forbids user namespaces: it runs, fails every check it takes
with the reason and the fix in the reader's language, and /healthz answers 503.

The worker's bwrap (SKYNET_BWRAP) answers as bubblewrap does on such a kernel; the
kernel's own refusal is tested without a worker in tests/sandbox/test_unavailable.py.
"""

from __future__ import annotations

import os
import stat

import pytest

from checks.models import Check
from checks.services import check_create
from tests.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"
REFUSING_BWRAP = """#!/bin/sh
echo "bwrap: No permissions to create a new namespace, likely because the kernel does not \
allow non-privileged user namespaces." >&2
exit 1
"""


@pytest.fixture
def refusing_bwrap(tmp_path):
    # Readable and runnable by the sandbox's user, as any bwrap must be.
    folder = tmp_path / "bin"
    folder.mkdir()
    for path in (tmp_path, folder):
        path.chmod(0o755)
    bwrap = folder / "bwrap"
    bwrap.write_text(REFUSING_BWRAP)
    bwrap.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return str(bwrap)


def test_no_check_runs_and_each_one_says_why(owner, owner_client, workers, refusing_bwrap):
    workers("no-userns", {"SKYNET_BWRAP": refusing_bwrap})
    check = check_create(owner=owner, source=QUICK, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=check.pk).is_final, 60)
    check.refresh_from_db()
    assert check.status == Check.Status.FAILED
    load = next(stage for stage in check.result["stages"] if stage["id"] == "load")
    assert (load["problem"], load["params"]["reason"]) == (
        "sandbox_unavailable",
        "no_user_namespaces",
    )
    assert {case["status"] for case in check.result["cases"]} == {"skipped"}
    pages = {
        language: owner_client.get(f"/{language}/checks/{check.pk}/").content.decode()
        for language in ("en", "es", "hi")
    }
    assert "The sandbox is unavailable on this worker" in pages["en"]
    assert "SKYNET_SANDBOX=unconfined" in pages["en"]
    assert "El sandbox no está disponible en este proceso de trabajo" in pages["es"]
    assert "इस वर्कर पर सैंडबॉक्स उपलब्ध नहीं है" in pages["hi"]
    for language in ("es", "hi"):
        assert "The sandbox is unavailable" not in pages[language]


def test_healthz_answers_503_and_names_the_reason(
    client, settings, workers, refusing_bwrap, monkeypatch
):
    token = "health-token-for-this-test-0123456789"
    settings.HEALTH_TOKEN = token
    workers("no-userns-health", {"SKYNET_BWRAP": refusing_bwrap})
    anonymous = client.get("/healthz")
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "fail"}
    detailed = client.get("/healthz", headers={"Authorization": f"Bearer {token}"})
    assert detailed.status_code == 503
    body = detailed.json()
    assert "worker" in body["failing"]
    assert "sandbox unavailable on no-userns-health" in body["worker"]["error"]
    assert "no_user_namespaces" in body["worker"]["error"]
    assert os.path.exists(refusing_bwrap)
