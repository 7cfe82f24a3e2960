"""A walk over every operation the schema publishes: none answers without a token, none
writes with a read token, and another user's object answers exactly as one that does not
exist. An operation added later is walked too; a path parameter the walk does not know
fails it until it is added here."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.api.conftest import Api, make_token
from tests.api.test_api_schema import OPEN
from tests.skynet_web.test_security import owned_objects

pytestmark = pytest.mark.django_db

PARAMETER = re.compile(r"{(\w+)}")
# Each path parameter, as the key of `owned` holding alice's object of that kind.
OWNED_BY = {
    "metric_id": "m",
    "number": None,  # a version number: 1 is alice's first
    "check_id": "c",
    "dataset_id": "dataset",
    "evaluation_id": "e",
    "draft_id": "d",
    "run_id": "u",
    "labelling_id": "l",
}
NOT_THERE = 987654


@pytest.fixture
def owned(owner):
    return owned_objects(owner)


def operations():
    response = Client().get("/api/v1/schema")
    for path, methods in response.json()["paths"].items():
        for method in methods:
            yield method, path


def fill(path: str, ids: dict | None) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        assert name in OWNED_BY, f"add the path parameter {name!r} to the walk"
        if ids is None:
            return "1" if name == "number" else str(NOT_THERE)
        return "1" if OWNED_BY[name] is None else str(ids[OWNED_BY[name]])

    return PARAMETER.sub(value, path).removeprefix("/api/v1")


def call(api: Api, method: str, path: str):
    if method == "get":
        return api.get(path)
    if method == "delete":
        return api.delete(path)
    if method == "put":
        return api.put(path, {})
    assert method == "post", f"add {method} to the walk"
    return api.post(path, {})


def test_no_operation_answers_without_a_token(owned):
    for method, path in operations():
        if (method, path) in OPEN:  # the index: what the API is, for anyone
            continue
        response = call(Api(None), method, fill(path, owned))
        assert response.status_code == 401, (method, path)
        assert response.json()["code"] == "unauthenticated"


def test_no_operation_writes_with_a_read_token(owned, owner):
    reader = Api(make_token(owner, scope="read"))
    for method, path in operations():
        if method == "get":
            continue
        response = call(reader, method, fill(path, owned))
        assert response.status_code == 403, (method, path)
        assert response.json()["code"] == "read_only_token"


def test_another_users_objects_answer_as_missing_ones(owned, outsider):
    bob = Api(make_token(outsider))
    walked = 0
    for method, path in operations():
        if not PARAMETER.search(path):
            continue
        theirs = call(bob, method, fill(path, owned))
        missing = call(bob, method, fill(path, None))
        assert theirs["Content-Type"].startswith("application/json"), (method, path)
        assert (theirs.status_code, theirs.json()["code"]) == (
            missing.status_code,
            missing.json()["code"],
        ), (method, path)
        assert theirs.status_code in (404, 422), (method, path)
        if method == "get":
            assert theirs.status_code == 404, (method, path)
        walked += 1
    assert walked >= 7
