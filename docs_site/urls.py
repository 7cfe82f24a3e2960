from __future__ import annotations

from django.urls import path, re_path

from docs_site import views

urlpatterns = [
    path("", views.docs_index, name="docs_index"),
    re_path(
        r"^(?P<language>en|es|hi)/(?P<slug>[a-z]+/[a-z-]+)$", views.docs_page, name="docs_page"
    ),
]
