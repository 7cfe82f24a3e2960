from __future__ import annotations

from django.urls import path, re_path

from docs_site import pages, views

_LANGUAGE = "|".join(pages.LANGUAGES)

app_name = "docs"

urlpatterns = [
    path("", views.docs_index, name="index"),
    re_path(rf"^(?P<language>{_LANGUAGE})/(?P<slug>[a-z]+/[a-z-]+)$", views.docs_page, name="page"),
    re_path(
        rf"^(?P<language>{_LANGUAGE})/examples/(?P<name>[a-z-]+\.[a-z]+)$",
        views.docs_download,
        name="download",
    ),
]
