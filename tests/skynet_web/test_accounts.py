from __future__ import annotations

import pytest
import redis
from django.contrib.auth import get_user_model
from django.test import Client

from skynet_web.env import redis_py_url
from skynet_web.management.commands.serve import DEMO_USERNAME, ensure_demo_account

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("signup_counts")]

# One address that several people share (a lab behind one router), and another one.
LAB = "203.0.113.7"
ELSEWHERE = "198.51.100.4"


def sign_up(username: str, address: str, language: str = "en"):
    # A client of its own per person: a signed-in client is sent home, not counted.
    password = f"{username}-long-pass-phrase-77"
    return Client(REMOTE_ADDR=address).post(
        f"/{language}/accounts/signup/",
        {"username": username, "password1": password, "password2": password},
    )


def account_exists(username: str) -> bool:
    return get_user_model().objects.filter(username=username).exists()


def test_signup_creates_an_account_and_logs_in(client):
    response = client.post(
        "/en/accounts/signup/",
        {
            "username": "carol",
            "password1": "a-long-pass-phrase-77",
            "password2": "a-long-pass-phrase-77",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert get_user_model().objects.filter(username="carol").exists()
    assert "Signed in as carol" in response.content.decode()


def test_signup_applies_the_password_validators(client):
    response = client.post(
        "/en/accounts/signup/", {"username": "dave", "password1": "123", "password2": "123"}
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "This password is too short" in body
    assert "This password is entirely numeric" in body
    assert not get_user_model().objects.filter(username="dave").exists()


def test_login_and_logout(client, owner):
    response = client.post(
        "/en/accounts/login/", {"username": "alice", "password": "alice-pass-123"}, follow=True
    )
    assert "Signed in as alice" in response.content.decode()
    response = client.post("/en/accounts/logout/", follow=True)
    body = response.content.decode()
    assert "Signed in as" not in body
    assert "Log in" in body


def test_wrong_password_is_refused(client, owner):
    response = client.post("/en/accounts/login/", {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_home_lists_only_the_signed_in_users_metrics(owner_client, owner, outsider):
    from metrics.models import Metric

    Metric.objects.create(owner=owner, name="ticket labels")
    Metric.objects.create(owner=outsider, name="someone else's metric")
    body = owner_client.get("/en/").content.decode()
    assert "ticket labels" in body
    assert "someone else" not in body


def test_home_says_when_there_are_no_metrics(owner_client):
    assert "You have no metrics yet." in owner_client.get("/en/").content.decode()


def test_pages_set_the_csrf_header_once_on_body(owner_client):
    body = owner_client.get("/en/").content.decode()
    assert body.count('hx-headers=\'{"X-CSRFToken"') == 1
    assert "/static/django_htmx/htmx-2.min.js" in body


def test_demo_account_is_created_once_and_its_password_works(tmp_path, client):
    login_file = tmp_path / "demo-login.txt"
    username, password = ensure_demo_account(login_file)
    assert username == DEMO_USERNAME and password
    assert oct(login_file.stat().st_mode & 0o777) == "0o600"
    again, same_password = ensure_demo_account(login_file)
    assert get_user_model().objects.filter(username=DEMO_USERNAME).count() == 1
    assert same_password == password
    response = client.post(
        "/en/accounts/login/", {"username": username, "password": password}, follow=True
    )
    assert "Signed in as demo" in response.content.decode()


def test_sign_ups_past_the_limit_from_one_address_are_refused(settings):
    settings.SIGNUP_RATE_PER_HOUR = 3
    for username in ("carol", "dave", "erin"):
        assert sign_up(username, LAB).status_code == 302, username
    response = sign_up("mallory", LAB)
    assert response.status_code == 429
    assert not account_exists("mallory")
    assert get_user_model().objects.count() == 3
    body = response.content.decode()
    assert "Too many sign-ups from your address: at most 3 an hour." in body
    assert 0 < int(response["Retry-After"]) <= 3600


def test_a_refused_sign_up_keeps_the_username_but_not_the_passwords(settings):
    settings.SIGNUP_RATE_PER_HOUR = 1
    sign_up("carol", LAB)
    response = sign_up("mallory", LAB)
    assert response.status_code == 429
    body = response.content.decode()
    assert 'name="username" value="mallory"' in body
    assert "mallory-long-pass-phrase-77" not in body
    # The refused form was not validated, so it shows no field errors.
    assert "errorlist" not in body


@pytest.mark.parametrize(
    ("language", "words"),
    [("es", "Demasiados registros desde tu dirección"), ("hi", "आपके पते से बहुत अधिक साइन-अप")],
)
def test_the_limit_message_is_in_the_readers_language(settings, language, words):
    from tests.i18n.test_pages_localized import english_fragments, visible_text

    settings.SIGNUP_RATE_PER_HOUR = 1
    sign_up("carol", LAB, language)
    response = sign_up("mallory", LAB, language)
    assert response.status_code == 429
    text = visible_text(response.content.decode())
    assert words in text
    assert [msgid for msgid, pattern in english_fragments(language) if pattern.search(text)] == []


def test_failed_sign_up_attempts_count_too(settings):
    settings.SIGNUP_RATE_PER_HOUR = 2
    lab = Client(REMOTE_ADDR=LAB)
    for _ in range(2):
        response = lab.post(
            "/en/accounts/signup/", {"username": "mallory", "password1": "1", "password2": "1"}
        )
        assert response.status_code == 200
    assert sign_up("carol", LAB).status_code == 429
    assert not account_exists("carol")


def test_a_limited_address_does_not_limit_another(settings):
    settings.SIGNUP_RATE_PER_HOUR = 1
    sign_up("carol", LAB)
    assert sign_up("mallory", LAB).status_code == 429
    assert sign_up("frank", ELSEWHERE).status_code == 302
    assert account_exists("frank")


def test_the_sign_up_form_is_shown_to_a_limited_address(settings):
    settings.SIGNUP_RATE_PER_HOUR = 1
    sign_up("carol", LAB)
    lab = Client(REMOTE_ADDR=LAB)
    for _ in range(3):
        response = lab.get("/en/accounts/signup/")
        assert response.status_code == 200
        assert "Too many sign-ups" not in response.content.decode()
    assert sign_up("mallory", LAB).status_code == 429


def test_the_count_is_kept_in_redis_where_every_web_process_sees_it(
    settings, signup_counts, redis_url
):
    settings.SIGNUP_RATE_PER_HOUR = 3
    assert sign_up("carol", LAB).status_code == 302
    assert sign_up("dave", LAB).status_code == 302
    # Read with a plain Redis client, as another web process would find it.
    store = redis.Redis.from_url(redis_py_url(redis_url))
    prefix = settings.CACHES["ratelimit"]["KEY_PREFIX"]
    (key,) = store.keys(f"{prefix}:*")
    assert int(store.get(key)) == 2
    assert 3500 < store.ttl(key) <= 3600 + 5
    store.incr(key)  # another web process took the lab's third sign-up
    assert sign_up("erin", LAB).status_code == 429
    assert not account_exists("erin")


def test_sign_up_is_refused_clearly_when_the_counts_cannot_be_kept(settings, caplog):
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {**settings.CACHES["ratelimit"], "LOCATION": "redis://127.0.0.1:1/0"},
    }
    response = sign_up("carol", LAB)
    assert response.status_code == 503
    assert "Sign-up is unavailable right now." in response.content.decode()
    assert "El registro no está disponible" in sign_up("carol", LAB, "es").content.decode()
    assert 'name="username" value="carol"' in response.content.decode()
    assert not account_exists("carol")
    assert "its rate limit could not be counted" in caplog.text
