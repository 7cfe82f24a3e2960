from __future__ import annotations

from django.urls import path

from runs import views

app_name = "runs"

urlpatterns = [
    # The wizard's last step and a draft's bundle: before submissions.urls' step pattern.
    path("submit/<int:pk>/submit/", views.run_submit, name="submit"),
    path("submit/<int:pk>/bundle.zip", views.draft_bundle, name="draft_bundle"),
    path("runs/", views.run_list, name="list"),
    path("runs/<int:pk>/", views.run_detail, name="detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="cancel"),
    path("runs/<int:pk>/resume/", views.run_resume, name="resume"),
    path("runs/<int:pk>/bundle.zip", views.run_bundle, name="bundle"),
    path("runs/<int:pk>/best.txt", views.run_best, name="best"),
]
