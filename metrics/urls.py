from __future__ import annotations

from django.urls import path

from metrics import convert_views, views

app_name = "metrics"

urlpatterns = [
    path("", views.home, name="home"),
    path("metrics/new/", views.metric_create, name="create"),
    path("metrics/new/import/", convert_views.metric_import, name="import"),
    path("metrics/<int:pk>/", views.metric_detail, name="detail"),
    path("metrics/<int:pk>/save/", views.metric_save, name="save"),
    path("metrics/<int:pk>/diagnostics/", views.metric_diagnostics, name="diagnostics"),
    path("metrics/<int:pk>/add-imports/", views.metric_add_imports, name="add_imports"),
    path("metrics/<int:pk>/files/upload/", views.metric_files_upload, name="files_upload"),
    path("metrics/<int:pk>/convert/", convert_views.metric_convert, name="convert"),
    path("metrics/<int:pk>/versions/", views.version_list, name="versions"),
    path("metrics/<int:pk>/versions/<int:number>/", views.version_detail, name="version"),
    path(
        "metrics/<int:pk>/versions/<int:number>/restore/",
        views.version_restore,
        name="version_restore",
    ),
    path("metrics/<int:pk>/diff/", views.version_diff, name="diff"),
]
