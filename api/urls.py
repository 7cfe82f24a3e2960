from __future__ import annotations

from django.urls import path

from api import views

app_name = "api"

urlpatterns = [
    path("", views.token_list, name="tokens"),
    path("<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
]
