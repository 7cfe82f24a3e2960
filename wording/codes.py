"""Every code a reader can meet in a check result, for the translations to cover.

The engine's own codes are contract.codes; a model_error also carries the codes of the
provider call it passes on (providers.clients). This is where the two meet, so the core
needs no list of the other's codes.
"""

from __future__ import annotations

from contract import codes as engine
from providers.clients import ERROR_CODES as PROVIDER_ERROR_CODES

PROBLEMS = engine.PROBLEMS
# The engine's model_error codes, then what a provider call can fail with.
MODEL_ERROR_CODES = tuple(dict.fromkeys(engine.MODEL_ERROR_CODES + PROVIDER_ERROR_CODES))


def all_codes() -> dict[str, tuple[str, ...]]:
    """Every code family by name, for completeness checks of translations."""
    return {**engine.all_codes(), "model_error_codes": MODEL_ERROR_CODES}
