from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from api.site import api
from api.views import client_download
from skynet_web import health, icon, language

urlpatterns = [
    # Machine-facing: no language prefix, no session.
    path("healthz", health.healthz, name="healthz"),
    # Asked for by browsers and feed readers whatever a page links: the site's icon.
    path("favicon.ico", icon.favicon, name="favicon"),
    path("language/", language.switch_language, name="switch_language"),
    # Docs pages carry their language in their own path: /docs/<lang>/<section>/<page>.
    path("docs/", include("docs_site.urls")),
    # The JSON API: no language prefix (its language is the Accept-Language header).
    path("api/v1/", api.urls),
    # The command line's wheel (api/client_wheel.py), for `pip install <address>`.
    path("client/<str:filename>", client_download, name="client_download"),
]

urlpatterns += i18n_patterns(
    path("admin/", admin.site.urls),
    path("accounts/", include("skynet_web.account_urls")),
    path("accounts/tokens/", include("api.urls")),
    # Before the wizard's: runs and evaluations answer some of its paths (submit/<pk>/...).
    path("", include("alignment.urls")),
    path("", include("runs.urls")),
    path("", include("labelling.urls")),
    path("", include("evaluations.urls")),
    path("", include("submissions.urls")),
    path("", include("metrics.urls")),
    path("", include("checks.urls")),
)
