from __future__ import annotations

from django.urls import path

from api import views

urlpatterns = [
    path("", views.token_list, name="token_list"),
    path("<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
]
