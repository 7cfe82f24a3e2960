from __future__ import annotations

from django.urls import path

from metrics import convert_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("metrics/new/", views.metric_create, name="metric_create"),
    path("metrics/new/import/", convert_views.metric_import, name="metric_import"),
    path("metrics/<int:pk>/", views.metric_detail, name="metric_detail"),
    path("metrics/<int:pk>/save/", views.metric_save, name="metric_save"),
    path("metrics/<int:pk>/diagnostics/", views.metric_diagnostics, name="metric_diagnostics"),
    path("metrics/<int:pk>/convert/", convert_views.metric_convert, name="metric_convert"),
    path("metrics/<int:pk>/versions/", views.version_list, name="version_list"),
    path("metrics/<int:pk>/versions/<int:number>/", views.version_detail, name="version_detail"),
    path(
        "metrics/<int:pk>/versions/<int:number>/restore/",
        views.version_restore,
        name="version_restore",
    ),
    path("metrics/<int:pk>/diff/", views.version_diff, name="version_diff"),
]
