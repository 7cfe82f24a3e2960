"""Under /api/, an error Django answers before or around the API (an unknown address,
a method a route does not take, an exception outside an operation) is the API's JSON
error too, never an HTML page; a query parameter an operation does not take is refused
before it runs; and every answer says the API's version (Skynet-Api-Version), which is
how a client tells the workbench from another server at the same address."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse

from api.errors import ApiError, respond
from api.strict import unknown_query
from api.version import API_VERSION, HEADER

log = logging.getLogger(__name__)

PREFIX = "/api/"
_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


class JsonErrorsMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self._answer(request)
        if request.path.startswith(PREFIX):
            response[HEADER] = API_VERSION
        return response

    def _answer(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        status = response.status_code
        code = _CODES.get(status, "server_error" if status >= 500 else "invalid")
        params = {"method": request.method, "limit": "?", "field": "", "problem": ""}
        return respond(ApiError(status, code, params=params))

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        if not request.path.startswith(PREFIX):
            return None
        from api.site import api  # the operations' schema, once the URLs are loaded

        refused = unknown_query(api, request)
        return respond(refused) if refused is not None else None

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not request.path.startswith(PREFIX):
            return None
        log.exception("API request %s %s failed", request.method, request.path)
        return respond(ApiError(500, "server_error"))
