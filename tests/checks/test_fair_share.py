"""The checks' line (checks.fair_share): a message claims its own check if its owner has
none running, else the oldest queued check of a user with none running; a check's end
sends a message for its owner's next; and a queued check says why it waits, on its page
and in the API, in the reader's language."""

from __future__ import annotations

import pytest
from django.utils import timezone

from checks import fair_share
from checks.execution import execute_check
from checks.models import Check
from tests.api.conftest import Api, make_token

pytestmark = pytest.mark.django_db

QUICK = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'Correct label.'}\n"


def queued(user) -> Check:
    return Check.objects.create(owner=user, source=QUICK, enqueued_at=timezone.now())


def running(user) -> Check:
    return Check.objects.create(owner=user, source=QUICK, status=Check.Status.RUNNING)


def test_a_message_for_a_busy_users_check_claims_another_users(owner, outsider, broker):
    running(owner)
    mine, theirs = queued(owner), queued(outsider)
    execute_check(mine.pk)  # the message named the owner's check
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.status == Check.Status.QUEUED
    assert theirs.status == Check.Status.PASSED


def test_a_message_that_finds_nobody_free_ends_and_the_end_of_a_check_wakes_the_next(
    owner, broker, redis_url
):
    import redis

    from tests.conftest import redis_py_url

    first = queued(owner)
    second = queued(owner)
    connection = redis.Redis.from_url(redis_py_url(redis_url))
    connection.delete("celery")
    Check.objects.filter(pk=first.pk).update(status=Check.Status.RUNNING)
    execute_check(second.pk)  # its owner is busy: nothing to claim
    assert Check.objects.get(pk=second.pk).status == Check.Status.QUEUED
    assert connection.llen("celery") == 0
    Check.objects.filter(pk=first.pk).update(status=Check.Status.QUEUED)
    execute_check(first.pk)  # runs, ends, and sends a message for the second
    assert Check.objects.get(pk=first.pk).status == Check.Status.PASSED
    assert connection.llen("celery") == 1
    assert str(second.pk) in connection.lindex("celery", 0).decode()


def test_a_queued_check_says_why_it_waits(owner, outsider, owner_client):
    running(owner)
    mine = queued(owner)
    assert fair_share.waiting(mine) == {"reason": "own_check_running"}
    first, second = queued(outsider), queued(outsider)
    assert fair_share.waiting(first) == {"reason": "worker_busy", "ahead": 0}
    assert fair_share.waiting(second) == {"reason": "worker_busy", "ahead": 1}
    page = owner_client.get(f"/en/checks/{mine.pk}/").content.decode()
    assert "Waiting for your other check to end" in page
    owner_client.force_login(outsider)
    page = owner_client.get(f"/hi/checks/{second.pk}/").content.decode()
    assert 'id="check-waiting"' in page and "Waiting for a worker" not in page


def test_the_api_says_why_a_check_waits_in_the_readers_language(owner, signup_counts):
    running(owner)
    mine = queued(owner)
    answer = Api(make_token(owner), language="es").get(f"/checks/{mine.pk}").json()
    assert answer["waiting"]["code"] == "own_check_running"
    assert answer["waiting"]["ahead"] is None
    assert answer["waiting"]["message"].startswith("Esperando")
    done = Api(make_token(owner)).get(f"/checks/{running(owner).pk}").json()
    assert done["waiting"] is None
