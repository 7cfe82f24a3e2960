from __future__ import annotations

from django.urls import path

from labelling import views

app_name = "labelling"

urlpatterns = [
    path("labellings/", views.labelling_list, name="list"),
    path("labellings/new/dataset/<int:pk>/", views.labelling_start, name="start"),
    path(
        "labellings/new/evaluation/<int:pk>/",
        views.labelling_start_from_evaluation,
        name="start_from_evaluation",
    ),
    path("labellings/<int:pk>/", views.labelling_detail, name="detail"),
    # Cases are numbered from 1, as the page shows them.
    path("labellings/<int:pk>/cases/<int:number>/", views.labelling_case, name="case"),
    path("labellings/<int:pk>/cases/<int:number>/label/", views.label_save, name="label"),
    path("labellings/<int:pk>/invite/", views.invite, name="invite"),
    path("labellings/<int:pk>/version/", views.version, name="version"),
]
