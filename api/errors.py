"""The API's one error shape: {"code", "message", "field"}, the message in the request's
language. Every error the API answers goes through here: its own, the services'
refusals, a body that does not validate, a missing object, and anything unforeseen (a
500 whose body names no file, line or exception)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _
from ninja.errors import AuthenticationError, HttpError, ValidationError

from wording import words

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error to answer as JSON: `code` of `family` (messages.FAMILIES) with `params`,
    about `field` (a dotted path into the request body or query, or None)."""

    def __init__(
        self,
        status: int,
        code: str,
        *,
        params: Mapping | None = None,
        field: str | None = None,
        family: str = "api",
        headers: Mapping[str, str] | None = None,
        message: str | None = None,
    ) -> None:
        super().__init__(code)
        # Words already in the reader's language (a form's error), used as they are.
        self.message = message
        self.status = status
        self.code = code
        self.params = dict(params or {})
        self.field = field
        self.family = family
        self.headers = dict(headers or {})


def body(code: str, message: str, field: str | None = None, **extra) -> dict:
    return {"code": code, "message": message, "field": field, **extra}


def respond(error: ApiError) -> JsonResponse:
    message = error.message or words(error.code, error.params, family=error.family)
    response = JsonResponse(body(error.code, message, error.field), status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response


def not_found() -> JsonResponse:
    return respond(ApiError(404, "not_found"))


# pydantic's error types, as the API's codes and the words of what was expected.
_EXPECTED = {
    "string_type": _("a string of text"),
    "int_type": _("a whole number"),
    "int_parsing": _("a whole number"),
    "int_from_float": _("a whole number"),
    "float_type": _("a number"),
    "float_parsing": _("a number"),
    "bool_type": _("true or false"),
    "bool_parsing": _("true or false"),
    "dict_type": _("an object"),
    "model_type": _("an object"),
    "model_attributes_type": _("an object"),
    "list_type": _("a list"),
    "datetime_type": _("a date and time"),
    "datetime_parsing": _("a date and time"),
}


def _problem(error: Mapping) -> tuple[str, str]:
    """(code, sentence) for one pydantic error."""
    kind = error.get("type", "")
    context = error.get("ctx") or {}
    if kind == "missing":
        return "required", str(_("This field is required."))
    if kind == "extra_forbidden":
        return "unknown_field", str(_("This field is not one the API takes."))
    if kind == "json_invalid":
        return "not_json", str(_("The body is not valid JSON."))
    if kind in _EXPECTED:
        return "wrong_type", str(_("This should be %(expected)s.") % {"expected": _EXPECTED[kind]})
    if kind in ("literal_error", "enum"):
        return "not_a_choice", str(
            _("This should be one of: %(choices)s.") % {"choices": context.get("expected", "")}
        )
    if kind == "string_too_long":
        return "too_long", str(
            _("The longest this may be, in characters, is %(max)s.")
            % {"max": context.get("max_length")}
        )
    if kind == "string_too_short":
        return "too_short", str(
            _("The shortest this may be, in characters, is %(min)s.")
            % {"min": context.get("min_length")}
        )
    if kind in ("greater_than_equal", "greater_than"):
        limit = context.get("ge", context.get("gt"))
        return "out_of_range", str(_("This should be at least %(min)s.") % {"min": limit})
    if kind in ("less_than_equal", "less_than"):
        limit = context.get("le", context.get("lt"))
        return "out_of_range", str(_("This should be at most %(max)s.") % {"max": limit})
    if kind == "value_error" and isinstance(context.get("error"), ApiError):
        inner = context["error"]
        return inner.code, words(inner.code, inner.params, family=inner.family)
    return "invalid", str(_("This value is not valid."))


def _field(location: list | tuple) -> str | None:
    parts = [str(part) for part in location]
    if parts and parts[0] in ("body", "query", "path", "form", "file", "header"):
        parts = parts[1:]
        # ninja names the body after the view's parameter: drop that name too.
        if parts and location[0] == "body" and parts[0] in ("payload", "body"):
            parts = parts[1:]
    return ".".join(parts) or None


def validation_response(errors: list[Mapping]) -> JsonResponse:
    # An id in the address that is no id (/metrics/abc) names nothing there.
    if any((error.get("loc") or ("",))[0] == "path" for error in errors):
        return not_found()
    described = []
    for error in errors:
        code, sentence = _problem(error)
        field = _field(error.get("loc") or ())
        message = (
            words("invalid", {"field": field, "problem": sentence}, family="api")
            if field
            else sentence
        )
        described.append(body(code, message, field))
    first = described[0] if described else body("invalid", str(_("This value is not valid.")))
    return JsonResponse({**first, "errors": described}, status=422)


def install(api) -> None:
    """Answer every error of `api` (a NinjaAPI) in the one shape."""

    @api.exception_handler(ApiError)
    def _own(request: HttpRequest, error: ApiError) -> HttpResponse:
        return respond(error)

    @api.exception_handler(ValidationError)
    def _invalid(request: HttpRequest, error: ValidationError) -> HttpResponse:
        return validation_response(error.errors)

    @api.exception_handler(Http404)
    def _missing(request: HttpRequest, error: Http404) -> HttpResponse:
        return not_found()

    @api.exception_handler(AuthenticationError)
    def _anonymous(request: HttpRequest, error: AuthenticationError) -> HttpResponse:
        return respond(ApiError(401, "unauthenticated", headers={"WWW-Authenticate": "Bearer"}))

    @api.exception_handler(HttpError)
    def _http(request: HttpRequest, error: HttpError) -> HttpResponse:
        # ninja wraps what the body's parser (api.strict) raised: answer that instead.
        if isinstance(error.__cause__, ApiError):
            return respond(error.__cause__)
        if error.status_code == 404:
            return not_found()
        if error.status_code == 413:
            return respond(ApiError(413, "too_large", params={"limit": "?"}))
        return respond(ApiError(error.status_code, "invalid", params={"field": "", "problem": ""}))

    @api.exception_handler(RequestDataTooBig)
    def _too_big(request: HttpRequest, error: RequestDataTooBig) -> HttpResponse:
        limit = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return respond(ApiError(413, "too_large", params={"limit": limit}))

    @api.exception_handler(Exception)
    def _unforeseen(request: HttpRequest, error: Exception) -> HttpResponse:
        log.exception("API request %s %s failed", request.method, request.path)
        return respond(ApiError(500, "server_error"))
