"""The account's API tokens page: a token is shown once, listed by its first characters,
revoked by its owner only."""

from __future__ import annotations

import re

import pytest

from api.models import ApiToken
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r"skn_[A-Za-z0-9_-]{40,}")


@pytest.fixture(autouse=True)
def _api_counts(signup_counts):
    return signup_counts


def create(client, **changes):
    data = {"name": "CI of labels", "scope": "write", "expires": "30", **changes}
    return client.post("/en/accounts/tokens/", data)


def test_a_new_token_is_shown_once_and_works(owner_client):
    response = create(owner_client)
    assert response.status_code == 200
    assert response["Cache-Control"].startswith("max-age=0")
    token = TOKEN.search(response.content.decode()).group(0)
    row = ApiToken.objects.get()
    assert row.digest != token and token not in row.prefix and token.startswith(f"skn_{row.prefix}")
    assert row.scope == "write" and row.expires_at is not None
    listed = owner_client.get("/en/accounts/tokens/").content.decode()
    assert token not in listed and f"skn_{row.prefix}…" in listed and "CI of labels" in listed
    assert Api(token).get("/me").json()["username"] == "alice"


def test_a_token_that_never_expires_and_reads_only(owner_client):
    create(owner_client, scope="read", expires="never")
    row = ApiToken.objects.get()
    assert row.scope == "read" and row.expires_at is None


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_a_bad_form_is_refused_in_the_readers_language_and_makes_nothing(owner_client, language):
    response = owner_client.post(f"/{language}/accounts/tokens/", {"name": "", "scope": "all"})
    assert response.status_code == 422
    assert not ApiToken.objects.exists()
    assert not TOKEN.search(response.content.decode())


def test_revoking_ends_the_token_and_another_user_cannot_revoke_it(owner_client, outsider):
    from django.test import Client

    token = TOKEN.search(create(owner_client).content.decode()).group(0)
    row = ApiToken.objects.get()
    other = Client()
    other.force_login(outsider)
    assert other.post(f"/en/accounts/tokens/{row.pk}/revoke/").status_code == 404
    assert other.get(f"/en/accounts/tokens/{row.pk}/revoke/").status_code == 404
    # Revoking asks first: the list's button leads to a page that says what it ends.
    listed = owner_client.get("/en/accounts/tokens/").content.decode()
    assert f'href="/en/accounts/tokens/{row.pk}/revoke/"' in listed
    asked = owner_client.get(f"/en/accounts/tokens/{row.pk}/revoke/").content.decode()
    assert "cannot be brought back" in asked and 'id="confirm-revoke"' in asked
    assert Api(token).get("/me").status_code == 200
    response = owner_client.post(f"/en/accounts/tokens/{row.pk}/revoke/", follow=True)
    assert "revoked" in response.content.decode()
    assert Api(token).get("/me").json()["code"] == "token_revoked"
    assert "Revoked" in owner_client.get("/en/accounts/tokens/").content.decode()


def test_one_user_may_hold_twenty_active_tokens(owner_client, monkeypatch):
    from api import views

    monkeypatch.setattr(views, "MAX_ACTIVE", 2)
    create(owner_client)
    create(owner_client)
    refused = create(owner_client)
    assert refused.status_code == 422 and ApiToken.objects.count() == 2
    assert "Revoke one first" in refused.content.decode()


def test_the_page_needs_a_login(client):
    response = client.get("/en/accounts/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_form_starts_on_read_and_write_and_says_which_commands_need_it(owner_client):
    body = owner_client.get("/en/accounts/tokens/").content.decode()
    assert re.search(r'<input[^>]*value="write"[^>]*checked', body), "read and write first"
    assert not re.search(r'<input[^>]*value="read"[^>]*checked', body)
    assert "skynet check, evaluate and run submit need a token that may read and write" in body
