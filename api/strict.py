"""What the API refuses rather than guesses: a body that is not JSON (400), a body sent as
another content type (415), and a query parameter its operation does not take (422,
naming the ones it does). A request that says what it means gets what it asked for, or
the reason it cannot."""

from __future__ import annotations

import functools
import re

from django.http import HttpRequest
from ninja.parser import Parser

from api.errors import ApiError

JSON = "application/json"
# Uploads (datasets) are multipart; every other body is JSON.
FORMS = ("multipart/form-data",)


class JsonBodies(Parser):
    """ninja's parser, told the content type first and the parse error after."""

    def parse_body(self, request: HttpRequest):
        kind = request.content_type or ""
        if kind != JSON and kind not in FORMS:
            raise ApiError(415, "unsupported_media_type", params={"type": kind or "—"})
        try:
            return super().parse_body(request)
        except UnicodeDecodeError:
            raise ApiError(400, "not_json", params={"detail": "not UTF-8"}) from None
        except ValueError as error:  # json.JSONDecodeError
            raise ApiError(400, "not_json", params={"detail": str(error)}) from None


def _schema_path(route: str) -> str:
    """Django's route of a ninja operation ("api/v1/evaluations/<evaluation_id>/cases") as
    the OpenAPI schema names its path ("/api/v1/evaluations/{evaluation_id}/cases")."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


@functools.cache
def _query_names(api) -> dict[tuple[str, str], frozenset[str]]:
    """Each operation's query parameters, by (method, path), as its schema lists them."""
    names = {}
    for path, operations in api.get_openapi_schema()["paths"].items():
        for method, operation in operations.items():
            names[(method.upper(), path)] = frozenset(
                parameter["name"]
                for parameter in operation.get("parameters", ())
                if parameter.get("in") == "query"
            )
    return names


def unknown_query(api, request: HttpRequest) -> ApiError | None:
    """A 422 naming the first query parameter this operation does not take, if any."""
    if not request.GET or request.resolver_match is None:
        return None
    key = (request.method, _schema_path(request.resolver_match.route))
    known = _query_names(api).get(key)
    if known is None:  # not an operation of the schema (its docs page, say)
        return None
    unknown = sorted(set(request.GET) - known)
    if not unknown:
        return None
    return ApiError(
        422,
        "unknown_parameter",
        params={"name": unknown[0], "known": ", ".join(sorted(known)) or "—"},
        field=unknown[0],
    )
