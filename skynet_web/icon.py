"""/favicon.ico: browsers and feed readers ask for it whatever a page links, so it leads to
the site's icon (static/favicon.svg, which every page links) rather than a 404."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.views.decorators.http import require_GET


@require_GET
def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    return HttpResponsePermanentRedirect(static("favicon.svg"))
