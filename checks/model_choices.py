"""The model catalogue as the web app and the worker use it."""

from __future__ import annotations

import functools
import os

from django.conf import settings
from django.core import checks

from providers.budget import Limits
from providers.catalogue import Catalogue, CatalogueError, load_catalogue


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


def options() -> list[dict]:
    """Every model for a picker: configured ones can be picked, the others say how."""
    found = catalogue()
    return [
        {
            "id": model.id,
            "label": f"{model.name} ({model.id})",
            "configured": found.configured(model),
            "key_env": model.api_key_env,
        }
        for model in found.models
    ]


@checks.register()
def catalogue_loads(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A broken catalogue stops `manage.py check` and start-up with the reason."""
    try:
        catalogue()
    except CatalogueError as exc:
        return [checks.Error(str(exc), id="checks.E001")]
    return []
