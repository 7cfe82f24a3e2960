"""The OpenAPI schema at /api/v1/schema: valid OpenAPI, and naming every endpoint the API
promises (a test that fails when one goes missing), each behind the bearer token."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

from api.version import API_VERSION

pytestmark = pytest.mark.django_db

# Every operation the API promises: what its users' scripts and the `skynet` command line
# call. Removing or renaming one breaks them; this list is where that shows first.
PROMISED = {
    ("get", "/api/v1/"),
    ("get", "/api/v1/me"),
    ("get", "/api/v1/metrics"),
    ("post", "/api/v1/metrics"),
    ("get", "/api/v1/metrics/{metric_id}"),
    ("get", "/api/v1/metrics/{metric_id}/versions"),
    ("post", "/api/v1/metrics/{metric_id}/versions"),
    ("get", "/api/v1/metrics/{metric_id}/versions/{number}"),
    ("post", "/api/v1/checks"),
    ("get", "/api/v1/checks/{check_id}"),
    ("get", "/api/v1/checks/{check_id}/wait"),
    ("post", "/api/v1/checks/{check_id}/cancel"),
    ("post", "/api/v1/datasets"),
    ("get", "/api/v1/datasets"),
    ("get", "/api/v1/datasets/{dataset_id}"),
    ("delete", "/api/v1/datasets/{dataset_id}"),
    ("post", "/api/v1/evaluations"),
    ("get", "/api/v1/evaluations"),
    ("get", "/api/v1/evaluations/{evaluation_id}"),
    ("get", "/api/v1/evaluations/{evaluation_id}/wait"),
    ("get", "/api/v1/evaluations/{evaluation_id}/cases"),
    ("get", "/api/v1/evaluations/{evaluation_id}/download.csv"),
    ("get", "/api/v1/evaluations/{evaluation_id}/download.jsonl"),
    ("post", "/api/v1/evaluations/{evaluation_id}/cancel"),
    ("post", "/api/v1/runs/drafts"),
    ("get", "/api/v1/runs/drafts/{draft_id}"),
    ("put", "/api/v1/runs/drafts/{draft_id}"),
    ("post", "/api/v1/runs/drafts/{draft_id}/check"),
    ("post", "/api/v1/runs/drafts/{draft_id}/submit"),
    ("get", "/api/v1/runs"),
    ("get", "/api/v1/runs/{run_id}"),
    ("get", "/api/v1/runs/{run_id}/wait"),
    ("get", "/api/v1/runs/{run_id}/result"),
    ("get", "/api/v1/runs/{run_id}/best"),
    ("get", "/api/v1/runs/{run_id}/bundle"),
    ("post", "/api/v1/runs/{run_id}/cancel"),
    ("post", "/api/v1/runs/{run_id}/resume"),
}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from django.test import Client

    with django_db_blocker.unblock():
        response = Client().get("/api/v1/schema")
    assert response.status_code == 200
    return response.json()


def test_the_schema_is_valid_openapi(schema):
    validate(schema)
    # MAJOR.MINOR, as every answer's Skynet-Api-Version header says it.
    assert schema["info"]["version"] == API_VERSION and API_VERSION.startswith("1.")


def test_every_promised_endpoint_is_in_the_schema(schema):
    published = {
        (method, path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }
    missing = sorted(PROMISED - published)
    assert not missing, f"missing from the API: {missing}"


# The index says what the API is and where its schema is, so a client can tell the
# workbench from another server before it sends a token: the one open operation.
OPEN = {("get", "/api/v1/")}


def test_every_operation_but_the_index_asks_for_the_bearer_token(schema):
    schemes = schema["components"]["securitySchemes"]
    assert {scheme["scheme"] for scheme in schemes.values()} == {"bearer"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if (method, path) in OPEN:
                assert not operation.get("security"), f"{method} {path} asks for a token"
                continue
            assert operation.get("security"), f"{method} {path} is open"


def test_the_browsable_docs_are_served_without_a_cdn(client):
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
