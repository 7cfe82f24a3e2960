from __future__ import annotations

from django.urls import path

from submissions import dataset_views, views

app_name = "submissions"

urlpatterns = [
    path("submit/", views.draft_list, name="drafts"),
    path("submit/<int:pk>/", views.draft_resume, name="resume"),
    path("submit/<int:pk>/upload/", views.dataset_upload, name="upload"),
    path("submit/<int:pk>/diagnostics/", views.draft_diagnostics, name="diagnostics"),
    path("submit/<int:pk>/check/run/", views.draft_check, name="check"),
    path("submit/<int:pk>/check/gate/", views.draft_gate, name="gate"),
    path("submit/<int:pk>/delete/", views.draft_delete, name="delete"),
    path("submit/<int:pk>/<slug:step>/", views.draft_step, name="step"),
    path("datasets/", dataset_views.dataset_list, name="datasets"),
    path("datasets/<int:pk>/delete/", dataset_views.dataset_delete, name="dataset_delete"),
]
