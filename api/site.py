"""The versioned JSON API: /api/v1/, its OpenAPI schema at /api/v1/schema and its
browsable docs at /api/v1/docs. Every operation needs a token (api.auth) except those
two pages."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from ninja import NinjaAPI

from api import errors
from api.auth import TokenAuth
from api.routes import (
    alignment,
    checks,
    datasets,
    evaluations,
    index,
    labellings,
    me,
    metrics,
    runs,
)
from api.strict import JsonBodies
from api.version import API_VERSION

api = NinjaAPI(
    title="Skynet metric workbench API",
    version=API_VERSION,
    description=str(
        _(
            "Check and evaluate metrics and submit optimization runs from a script or a CI "
            "job. Send a personal API token as `Authorization: Bearer <token>`."
        )
    ),
    auth=TokenAuth(),
    openapi_url="/schema",
    docs_url="/docs",
    urls_namespace="api-v1",
    parser=JsonBodies(),
)
errors.install(api)
api.add_router("", index.router, tags=["index"])
api.add_router("/me", me.router, tags=["account"])
api.add_router("/metrics", metrics.router, tags=["metrics"])
api.add_router("/checks", checks.router, tags=["checks"])
api.add_router("/datasets", datasets.router, tags=["datasets"])
api.add_router("/evaluations", evaluations.router, tags=["evaluations"])
api.add_router("/runs", runs.router, tags=["runs"])
api.add_router("/labellings", labellings.router, tags=["labellings"])
api.add_router("", alignment.router, tags=["alignment"])
