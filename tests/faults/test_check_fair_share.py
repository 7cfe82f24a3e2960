"""One user's slow checks cannot hold the checks worker: on a worker of two processes, as
the site runs it, a user with three checks whose cases sleep holds one process, and
another user's quick check runs on the other and ends while theirs still wait."""

from __future__ import annotations

import pytest

from checks.models import Check
from checks.services import check_create
from tests.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"
SLEEPS = (
    "import time\n\n\ndef score(input, output, expected=None):\n"
    "    time.sleep(20)\n    return 1.0, {'feedback': 'late'}\n"
)


def test_another_users_quick_check_runs_beside_one_users_sleeping_checks(
    owner, outsider, workers, owner_client
):
    workers("checks", concurrency=2)
    slow = [check_create(owner=owner, source=SLEEPS, timeout_s=120) for _ in range(3)]
    wait_for(lambda: Check.objects.filter(owner=owner, status=Check.Status.RUNNING).exists(), 60)

    quick = check_create(owner=outsider, source=QUICK, timeout_s=20)
    wait_for(lambda: Check.objects.get(pk=quick.pk).is_final, 60)

    assert Check.objects.get(pk=quick.pk).status == Check.Status.PASSED
    # Before, the owner's second check took the other process, and the quick one waited
    # for a whole sleeping check. Now the owner holds one process, and says why it waits.
    # Whichever of them a process took first (the messages race), one runs, two wait.
    rows = Check.objects.filter(pk__in=[check.pk for check in slow])
    assert sorted(row.status for row in rows) == ["queued", "queued", "running"]
    queued = rows.filter(status=Check.Status.QUEUED).first()
    waiting = owner_client.get(f"/en/checks/{queued.pk}/").content.decode()
    assert "Waiting for your other check to end" in waiting
    Check.objects.filter(owner=owner).update(cancel_requested=True)
    # Each of the owner's checks comes in its turn, the last ones after the first ended.
    for check in slow:
        wait_for(lambda pk=check.pk: Check.objects.get(pk=pk).is_final, 60)
