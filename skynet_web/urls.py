from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from metrics_app import health

urlpatterns = [
    # Machine-facing: no language prefix, no session.
    path("healthz", health.healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
]

urlpatterns += i18n_patterns(
    path("admin/", admin.site.urls),
    path("accounts/", include("metrics_app.account_urls")),
    path("", include("metrics_app.urls")),
)
