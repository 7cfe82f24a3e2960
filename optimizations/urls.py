from __future__ import annotations

from django.urls import path

from optimizations import views

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/resume/", views.run_resume, name="run_resume"),
    path("runs/<int:pk>/bundle.zip", views.run_bundle, name="run_bundle"),
    path("runs/<int:pk>/best.txt", views.run_best, name="run_best"),
]
