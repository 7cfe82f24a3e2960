"""The base of every request body: a field the API does not know is refused by name (422
unknown_field), never dropped, so a typo (`metric_call`) cannot pass for a default."""

from __future__ import annotations

from ninja import Schema
from pydantic import ConfigDict


class BodyIn(Schema):
    model_config = ConfigDict(extra="forbid")
