from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from metrics_app.management.commands.serve import DEMO_USERNAME, ensure_demo_account

pytestmark = pytest.mark.django_db


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
    from metrics_app.models import Metric

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
    again, same_password = ensure_demo_account(login_file)
    assert get_user_model().objects.filter(username=DEMO_USERNAME).count() == 1
    assert same_password == password
    response = client.post(
        "/en/accounts/login/", {"username": username, "password": password}, follow=True
    )
    assert "Signed in as demo" in response.content.decode()
