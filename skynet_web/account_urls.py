from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from skynet_web import account_views

app_name = "accounts"

urlpatterns = [
    path("signup/", account_views.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
