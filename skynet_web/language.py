"""Choosing the interface language: the URL first, then the user's saved choice, then
the browser's Accept-Language (Django's LocaleMiddleware does the first and the last)."""

from __future__ import annotations

import re

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse, translate_url
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from skynet_web import profiles
from skynet_web.models import Profile

CODES = [code for code, _name in settings.LANGUAGES]
_ALTERNATIVES = "|".join(CODES)
PREFIXED = re.compile(rf"^/(?:{_ALTERNATIVES})(?:/|$)")
DOCS = re.compile(rf"^/docs/(?:{_ALTERNATIVES})/")


class PreferredLanguageMiddleware:
    """A signed-in user's saved language decides where an unprefixed URL ("/") goes.

    It must run after AuthenticationMiddleware (it reads request.user) and before
    LocaleMiddleware, which reads the language cookie this sets for the request only.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not PREFIXED.match(request.path_info):
            saved = self._saved_language(request)
            if saved in CODES:
                request.COOKIES[settings.LANGUAGE_COOKIE_NAME] = saved
        return self.get_response(request)

    @staticmethod
    def _saved_language(request: HttpRequest) -> str | None:
        try:
            user = getattr(request, "user", None)
            if user is None or not user.is_authenticated:
                return None
            return Profile.objects.filter(user=user).values_list("language", flat=True).first()
        except DatabaseError:
            # With the database down the language still comes from the URL or the browser,
            # so the error page the view ends in is in the reader's language.
            return None


def same_page_in(path: str, language: str) -> str:
    """`path` in another language: /es/metrics/3/ -> /hi/metrics/3/, docs included.

    The path is read in the language of its own prefix, not the one active for this
    request: the switcher is posted to an unprefixed URL, where the active language is
    the user's saved choice, and /hi/... does not resolve under Spanish. Reading it under
    the wrong language left the page unchanged, so a click on a language did nothing.
    """
    if DOCS.match(path):
        return DOCS.sub(f"/docs/{language}/", path, count=1)
    prefix = PREFIXED.match(path)
    if prefix is None:
        # "/", or a path outside the language patterns: the language's home page holds.
        with translation.override(language):
            return reverse("metrics:home") if path in ("", "/") else path
    own = prefix.group(0).strip("/")
    with translation.override(own):
        translated = translate_url(path, language)
    if translated == path and own != language:
        # A path that resolves to no view (a 404 page) still has its prefix swapped.
        translated = f"/{language}/" + path[len(prefix.group(0)) :]
    return translated


@require_POST
def switch_language(request: HttpRequest) -> HttpResponse:
    language = request.POST.get("language", "")
    if language not in CODES:
        language = translation.get_language()
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        with translation.override(language):
            target = reverse("metrics:home")
    if request.user.is_authenticated:
        profiles.profile_set_language(request.user, language)
    response = HttpResponseRedirect(same_page_in(target, language))
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=365 * 24 * 3600,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response
