from __future__ import annotations

from django.urls import path, re_path

from evaluations import start_views, views

app_name = "evaluations"

urlpatterns = [
    # Starting one: from the playground's metric, or from a wizard draft (before
    # submissions.urls' step pattern, which would take "evaluate" for a step).
    path("metrics/<int:pk>/evaluate/", start_views.metric_evaluate, name="start"),
    path(
        "metrics/<int:pk>/evaluate/upload/",
        start_views.metric_evaluate_upload,
        name="start_upload",
    ),
    path("submit/<int:pk>/evaluate/", start_views.draft_evaluate, name="start_for_draft"),
    path("evaluations/", views.evaluation_list, name="list"),
    path("evaluations/<int:pk>/", views.evaluation_detail, name="detail"),
    path("evaluations/<int:pk>/cancel/", views.evaluation_cancel, name="cancel"),
    path("evaluations/<int:pk>/cases/", views.case_list, name="cases"),
    path("evaluations/<int:pk>/cases/<int:index>/", views.case_detail, name="case"),
    path(
        "evaluations/<int:pk>/cases/<int:index>/playground/",
        views.case_to_playground,
        name="case_to_playground",
    ),
    re_path(
        r"^evaluations/(?P<pk>[0-9]+)/download\.(?P<fmt>csv|jsonl)$",
        views.evaluation_download,
        name="download",
    ),
]
