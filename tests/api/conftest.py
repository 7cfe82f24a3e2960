"""API tests: a user with tokens of each kind, and a client that sends one."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.utils import timezone

from api import tokens


@pytest.fixture(autouse=True)
def _api_counts(signup_counts):
    """API requests are counted per token in Redis, as sign-ups are: in this test's own
    keys of the test Redis."""
    return signup_counts


class Api:
    """Django's test client with a bearer token and JSON bodies."""

    def __init__(self, token: str | None, language: str = "en") -> None:
        self.client = Client()
        self.token = token
        self.language = language

    def _headers(self, extra: dict) -> dict:
        headers = {"Accept-Language": self.language, **extra}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def get(self, path: str, **extra):
        return self.client.get(
            f"/api/v1{path}", headers=self._headers(extra.pop("headers", {})), **extra
        )

    def post(self, path: str, body=None, **extra):
        return self.client.post(
            f"/api/v1{path}",
            data=body if body is not None else {},
            content_type="application/json",
            headers=self._headers(extra.pop("headers", {})),
            **extra,
        )

    def put(self, path: str, body=None, **extra):
        return self.client.put(
            f"/api/v1{path}",
            data=body if body is not None else {},
            content_type="application/json",
            headers=self._headers(extra.pop("headers", {})),
            **extra,
        )

    def upload(self, path: str, data: dict, **extra):
        return self.client.post(
            f"/api/v1{path}", data=data, headers=self._headers(extra.pop("headers", {})), **extra
        )

    def delete(self, path: str, **extra):
        return self.client.delete(f"/api/v1{path}", headers=self._headers(extra.pop("headers", {})))


def make_token(user, scope: str = "write", days: int | None = 30) -> str:
    _row, token = tokens.token_create(owner=user, name=f"{scope} token", scope=scope, days=days)
    return token


@pytest.fixture
def api(owner):
    """Alice's read-and-write token."""
    return Api(make_token(owner))


@pytest.fixture
def read_api(owner):
    return Api(make_token(owner, scope="read"))


@pytest.fixture
def outsider_api(outsider):
    return Api(make_token(outsider))


@pytest.fixture
def expired_token(owner):
    row, token = tokens.token_create(owner=owner, name="old", scope="write", days=1)
    type(row).objects.filter(pk=row.pk).update(
        expires_at=timezone.now() - datetime.timedelta(minutes=1)
    )
    return token
