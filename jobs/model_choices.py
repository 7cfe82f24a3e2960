"""The model catalogue as the web app and the worker use it."""

from __future__ import annotations

import functools
import os

from django.conf import settings
from django.core import checks

from providers.budget import Limits
from providers.catalogue import Catalogue, CatalogueError, load_catalogue
from providers.reachability import Reachability, probe_url

# This process's memory of which endpoints answer (providers.reachability: 60 s, 1 s tests).
reachability = Reachability()


@functools.cache
def catalogue() -> Catalogue:
    """Loaded once per process. Keys come from this process's environment only."""
    return load_catalogue(settings.MODEL_CATALOGUE, os.environ)


def limits() -> Limits:
    return Limits(
        max_calls=settings.CHECK_MAX_MODEL_CALLS,
        max_tokens=settings.CHECK_MAX_MODEL_TOKENS,
        max_usd=settings.CHECK_MAX_MODEL_USD,
    )


def options(*, fresh: bool = False) -> list[dict]:
    """Every model for a picker: configured ones can be picked when their endpoint
    answers, the others say why not. `reach` is the endpoint's test (None for a model
    not configured, which is not tested); `fresh` tests again whatever was remembered."""
    found = catalogue()
    configured = [m for m in found.models if found.configured(m)]
    urls = {m.id: probe_url(m, found.env) for m in configured}
    reaches = reachability.of(urls.values(), fresh=fresh)
    return [
        {
            "id": model.id,
            "label": f"{model.name} ({model.id})",
            "configured": model.id in urls,
            "key_env": model.api_key_env,
            "reach": reaches[urls[model.id]] if model.id in urls else None,
        }
        for model in found.models
    ]


@checks.register()
def catalogue_loads(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A broken catalogue stops `manage.py check` and start-up with the reason."""
    try:
        catalogue()
    except CatalogueError as exc:
        return [checks.Error(str(exc), id="jobs.E001")]
    return []
