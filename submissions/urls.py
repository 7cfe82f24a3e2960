from __future__ import annotations

from django.urls import path

from submissions import evaluate_views, views

urlpatterns = [
    path("submit/", views.draft_list, name="draft_list"),
    path("submit/<int:pk>/", views.draft_resume, name="draft_resume"),
    path("submit/<int:pk>/upload/", views.dataset_upload, name="dataset_upload"),
    path("submit/<int:pk>/diagnostics/", views.draft_diagnostics, name="draft_diagnostics"),
    path("submit/<int:pk>/check/run/", views.draft_check, name="draft_check"),
    path("submit/<int:pk>/check/gate/", views.draft_gate, name="draft_gate"),
    path("submit/<int:pk>/submit/", views.draft_submit, name="draft_submit"),
    path("submit/<int:pk>/delete/", views.draft_delete, name="draft_delete"),
    path("submit/<int:pk>/bundle.zip", views.draft_bundle, name="draft_bundle"),
    path("submit/<int:pk>/evaluate/", evaluate_views.draft_evaluate, name="draft_evaluate"),
    path("submit/<int:pk>/<slug:step>/", views.draft_step, name="draft_step"),
    # Evaluations started from the playground; the metric's own pages are metrics.urls'.
    path("metrics/<int:pk>/evaluate/", evaluate_views.metric_evaluate, name="metric_evaluate"),
    path(
        "metrics/<int:pk>/evaluate/upload/",
        evaluate_views.metric_evaluate_upload,
        name="metric_evaluate_upload",
    ),
]
