from __future__ import annotations

from django.urls import path

from checks import views

app_name = "checks"

urlpatterns = [
    path("models/test-again/", views.models_test_again, name="models_test_again"),
    path("checks/<int:pk>/", views.check_detail, name="detail"),
    path("checks/<int:pk>/cancel/", views.check_cancel, name="cancel"),
    path("checks/<int:pk>/cases/<int:index>/review/", views.review_create, name="review_create"),
    path("checks/<int:pk>/reviews/<int:review_pk>/", views.review_detail, name="review"),
]
