"""The worker's gateways to the models a check or an evaluation chose: each call timed,
counted, priced and held to a budget (providers.gateway). Shared by checks.execution and
evaluations.execution, so a choice that stopped being usable reads the same in both."""

from __future__ import annotations

from django.conf import settings

from jobs import model_choices
from providers.budget import Limits


def gateway_or_refusal(make):
    """(gateway, its per-case handler factory) from make(); (None, None) when no model is
    chosen. A choice that stopped being usable (a key removed from the server) reaches the
    user's code as a model_error saying so, rather than failing the whole run."""
    from providers.catalogue import ModelChoiceError
    from providers.gateway import refusing_handler

    try:
        gateway = make()
    except ModelChoiceError as exc:
        handler = refusing_handler(exc.code, exc.message)
        return None, lambda index: handler
    if gateway is None:
        return None, None
    return gateway, gateway.for_case


def gateway_to(model_id: str, limits: Limits, *, spent: dict | None = None):
    """gateway_or_refusal() for the catalogue's model `model_id`, held to `limits`, of
    which `spent` (Budget.spent(): an evaluation's earlier turns) is already used;
    (None, None) without a model."""
    from providers.budget import Budget
    from providers.gateway import ModelGateway

    if not model_id:
        return None, None
    found = model_choices.catalogue()
    return gateway_or_refusal(
        lambda: ModelGateway(
            found.resolve(model_id),
            env=found.env,
            limits=limits,
            timeout_s=settings.MODEL_TIMEOUT_S,
            budget=Budget.resumed(limits, spent),
        )
    )
