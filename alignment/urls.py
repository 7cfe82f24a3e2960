from __future__ import annotations

from django.urls import path

from alignment import views

app_name = "alignment"

urlpatterns = [
    path("evaluations/<int:pk>/align/", views.alignment_start, name="start"),
    path("runs/<int:pk>/accept-prompt/", views.alignment_accept, name="accept"),
]
