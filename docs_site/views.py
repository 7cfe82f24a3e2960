from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from docs_site import pages


@require_GET
def docs_index(request: HttpRequest) -> HttpResponse:
    language = translation.get_language_from_request(request)
    if language not in pages.LANGUAGES:
        language = "en"
    return redirect("docs:page", language=language, slug=pages.SLUGS[0])


@require_GET
def docs_page(request: HttpRequest, language: str, slug: str) -> HttpResponse:
    """A docs page; its language comes from the URL, and so does the interface's."""
    try:
        page = pages.load(language, slug)
    except pages.PageNotFound:
        raise Http404 from None
    with translation.override(language):
        request.LANGUAGE_CODE = language
        sidebar = [
            {"slug": other, "title": pages.load(language, other).title, "current": other == slug}
            for other in pages.SLUGS
        ]
        related = [
            {"slug": other, "title": pages.load(language, other).title}
            for other in page.related
            if other in pages.SLUGS
        ]
        body = pages.fill_labels(
            page.html,
            copy=_("Copy"),
            open_label=_("Open in playground"),
            open_base=reverse("metrics:create"),
            note=_("Note"),
        )
        response = render(
            request,
            "docs_site/page.html",
            {"page": page, "body": body, "sidebar": sidebar, "related": related},
        )
    response.headers.setdefault("Content-Language", language)
    return response


@require_GET
def docs_download(request: HttpRequest, language: str, name: str) -> HttpResponse:
    """A file a page links for download, such as an example dataset. It is served under
    every language's path so that a page's links stay in its language; the file is the
    same in each."""
    try:
        content_type = pages.DOWNLOADS[name]
    except KeyError:
        raise Http404 from None
    data = (pages.DOCS_DIR / "examples" / name).read_bytes()
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
