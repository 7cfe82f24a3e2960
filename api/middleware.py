"""Under /api/, an error Django answers before or around the API (an unknown address,
a method a route does not take, an exception outside an operation) is the API's JSON
error too, never an HTML page."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse

from api.errors import ApiError, respond

log = logging.getLogger(__name__)

PREFIX = "/api/"
_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


class JsonErrorsMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        status = response.status_code
        code = _CODES.get(status, "server_error" if status >= 500 else "invalid")
        params = {"method": request.method, "limit": "?", "field": "", "problem": ""}
        return respond(ApiError(status, code, params=params))

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not request.path.startswith(PREFIX):
            return None
        log.exception("API request %s %s failed", request.method, request.path)
        return respond(ApiError(500, "server_error"))
