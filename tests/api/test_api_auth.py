"""Who may use the API: a bearer token that is known, not revoked, not expired, with the
scope the request needs, within its allowance of requests a minute."""

from __future__ import annotations

import pytest

from api import tokens
from api.models import ApiToken
from tests.api.conftest import Api, make_token
from wording import words

pytestmark = pytest.mark.django_db


def error_of(response) -> dict:
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"code", "message", "field"}
    assert "Traceback" not in body["message"]
    return body


def test_no_token_is_401_asking_for_a_bearer_token():
    response = Api(None).get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert error_of(response)["code"] == "unauthenticated"


def test_another_scheme_or_a_made_up_token_is_refused(owner):
    basic = Api(None).get("/metrics", headers={"Authorization": "Basic YWxpY2U6eA=="})
    assert basic.status_code == 401 and error_of(basic)["code"] == "unauthenticated"
    made_up = Api("skn_" + "x" * 43).get("/metrics")
    assert made_up.status_code == 401 and error_of(made_up)["code"] == "token_invalid"
    # A real token's digest is not a token.
    token = make_token(owner)
    digest = ApiToken.objects.get().digest
    assert Api(digest).get("/metrics").status_code == 401
    assert Api(token).get("/metrics").status_code == 200


def test_a_revoked_token_is_refused_with_its_own_code(owner):
    token = make_token(owner)
    assert Api(token).get("/metrics").status_code == 200
    tokens.token_revoke(ApiToken.objects.get())
    response = Api(token).get("/metrics")
    assert response.status_code == 401 and error_of(response)["code"] == "token_revoked"


def test_an_expired_token_is_refused_and_says_when_it_expired(expired_token):
    response = Api(expired_token, "es").get("/metrics")
    body = error_of(response)
    assert response.status_code == 401 and body["code"] == "token_expired"
    assert "expiró" in body["message"]


def test_a_read_token_reads_but_never_writes(read_api):
    assert read_api.get("/metrics").status_code == 200
    response = read_api.post("/metrics", {"name": "m"})
    assert response.status_code == 403 and error_of(response)["code"] == "read_only_token"
    response = read_api.post("/checks", {"source": "def score(i, o, e=None): pass"})
    assert response.status_code == 403


def test_a_disabled_user_s_token_is_not_known(owner):
    token = make_token(owner)
    owner.is_active = False
    owner.save()
    assert error_of(Api(token).get("/metrics"))["code"] == "token_invalid"


def test_requests_past_the_token_s_allowance_are_429_with_retry_after(settings, owner):
    settings.API_RATE_PER_MINUTE = 3
    api = Api(make_token(owner))
    assert [api.get("/metrics").status_code for _ in range(3)] == [200, 200, 200]
    refused = api.get("/metrics")
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    body = error_of(refused)
    assert body["code"] == "rate_limited" and "3" in body["message"]
    # Another token of the same user has an allowance of its own.
    assert Api(make_token(owner)).get("/metrics").status_code == 200


def test_guessing_tokens_from_one_address_is_slowed_down(settings):
    settings.API_UNKNOWN_TOKEN_RATE_PER_MINUTE = 2
    codes = [error_of(Api(f"skn_guess{i}").get("/metrics"))["code"] for i in range(4)]
    assert codes == ["token_invalid", "token_invalid", "auth_rate_limited", "auth_rate_limited"]


def test_when_requests_cannot_be_counted_the_api_refuses_rather_than_let_through(settings, owner):
    api = Api(make_token(owner))
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            **settings.CACHES["ratelimit"],
            "LOCATION": "unix:///nonexistent/skynet-no-counts.sock",
        },
    }
    response = api.get("/metrics")
    assert response.status_code == 503 and error_of(response)["code"] == "rate_unavailable"


def test_the_token_is_stored_only_as_its_hash_and_its_use_is_noted(owner):
    row, token = tokens.token_create(owner=owner, name="ci", scope="read", days=None)
    stored = ApiToken.objects.get(pk=row.pk)
    assert token.startswith("skn_") and len(token) > 40
    assert token not in {stored.digest, stored.prefix, stored.name}
    assert stored.digest == tokens.digest(token) and stored.expires_at is None
    assert stored.last_used_at is None
    Api(token).get("/me")
    stored.refresh_from_db()
    assert stored.last_used_at is not None


def test_me_names_the_user_and_the_token(read_api):
    me = read_api.get("/me").json()
    assert me["username"] == "alice" and me["scope"] == "read"
    assert me["token_name"] == "read token" and me["expires_at"]


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_errors_are_in_the_request_s_language(language):
    body = error_of(Api(None, language).get("/metrics"))
    from django.utils.translation import override

    with override(language):
        assert body["message"] == words("unauthenticated", family="api")
    if language != "en":
        assert body["message"] != error_of(Api(None, "en").get("/metrics"))["message"]
