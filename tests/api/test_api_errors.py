"""Every error under /api/ is the one JSON shape, whichever layer answers it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def shape(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) >= {"code", "message", "field"} and body["message"]
    return body


def test_an_unknown_address_is_a_json_404(api):
    for path in ("/nothing", "/metrics/abc", "/checks/1/unknown"):
        response = api.get(path)
        assert response.status_code == 404 and shape(response)["code"] == "not_found"
    outside = api.client.get("/api/v2/metrics")
    assert outside.status_code == 404 and shape(outside)["code"] == "not_found"


def test_a_method_a_route_does_not_take_is_a_json_405(api):
    response = api.delete("/metrics")
    body = shape(response)
    assert response.status_code == 405 and body["code"] == "method_not_allowed"
    assert "DELETE" in body["message"]


def test_a_body_that_is_not_json_is_a_422_naming_the_problem(api):
    response = api.client.post(
        "/api/v1/metrics",
        data="{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api.token}"},
    )
    assert response.status_code in (400, 422)
    assert shape(response)["code"] in ("not_json", "invalid")


def test_a_wrong_type_names_its_field_in_spanish_and_hindi(owner):
    from tests.api.conftest import Api, make_token

    token = make_token(owner)
    bodies = {
        language: shape(Api(token, language).post("/metrics", {"name": 5}))
        for language in ("en", "es", "hi")
    }
    assert {body["field"] for body in bodies.values()} == {"name"}
    assert {body["code"] for body in bodies.values()} == {"wrong_type"}
    assert len({body["message"] for body in bodies.values()}) == 3
    assert all(body["errors"][0]["field"] == "name" for body in bodies.values())


def test_an_unforeseen_exception_is_a_json_500_without_a_traceback(api, monkeypatch):
    from metrics import selectors

    def broken(user):
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(selectors, "metrics_for_user", broken)
    response = api.get("/metrics")
    body = shape(response)
    assert response.status_code == 500 and body["code"] == "server_error"
    assert "secret" not in response.content.decode() and "Traceback" not in body["message"]


def test_a_body_past_the_request_limit_is_a_413_naming_the_limit(api, settings):
    response = api.post("/checks", {"source": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    body = shape(response)
    assert response.status_code == 413 and body["code"] == "too_large"
    assert "1.0" in body["message"] or "1,0" in body["message"]
