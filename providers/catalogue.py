"""The model catalogue: which models exist, what they cost, and whether each can be used.

Loaded once from a TOML file (see catalogue.toml for the format) with the environment it
will run in: a model is "configured" when the variable named by its api_key_env is set
and not empty, or when it needs no key. Validation is strict: anything the file gets wrong
raises CatalogueError with a message that names the model.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

PROVIDERS = ("openai", "anthropic", "openai_compatible")
DEFAULT_MAX_OUTPUT_TOKENS = 4096
# Read by the clients as the official SDKs do.
BASE_URL_VARIABLES = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")

_REQUIRED = {
    "id": str,
    "provider": str,
    "name": str,
    "context_window": int,
    "input_usd_per_mtok": float,
    "output_usd_per_mtok": float,
    "api_key_env": str,
}
_OPTIONAL = {"api_model": str, "base_url": str, "max_output_tokens": int}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CatalogueError(ValueError):
    """The catalogue file cannot be used; str() says where and why."""


class ModelChoiceError(LookupError):
    """A model that cannot be picked: `code` is "unknown_model" or "not_configured"
    (then `key_env` names the environment variable that would configure it)."""

    def __init__(self, code: str, model_id: str, key_env: str = "") -> None:
        super().__init__(code, model_id, key_env)
        self.code = code
        self.model_id = model_id
        self.key_env = key_env

    @property
    def message(self) -> str:
        """The model_error message a metric gets: the variable to set, or the unknown id."""
        return self.key_env if self.code == "not_configured" else self.model_id

    def __str__(self) -> str:
        if self.code == "not_configured":
            return f"model {self.model_id} is not configured: set the environment variable {self.key_env}"
        return f"unknown model {self.model_id}"


@dataclass(frozen=True)
class Model:
    id: str
    provider: str
    name: str
    api_model: str
    context_window: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    api_key_env: str
    base_url: str = ""
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS

    @property
    def needs_key(self) -> bool:
        return bool(self.api_key_env)

    def configure_hint(self) -> str:
        """How to make this model usable (English; a UI words it from api_key_env)."""
        if not self.needs_key:
            return ""
        return f"set the environment variable {self.api_key_env}"

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        """List-price cost of one call: tokens / 1e6 * price per million."""
        return (
            input_tokens / 1e6 * self.input_usd_per_mtok
            + output_tokens / 1e6 * self.output_usd_per_mtok
        )


@dataclass(frozen=True)
class Catalogue:
    models: tuple[Model, ...]
    # The variables the models use (their keys, the SDKs' base URLs), as read at load
    # time. Never in repr(): it holds keys.
    env: Mapping[str, str] = field(repr=False, default_factory=dict)

    def get(self, model_id: str) -> Model | None:
        return next((m for m in self.models if m.id == model_id), None)

    def configured(self, model: Model) -> bool:
        return not model.needs_key or bool(self.env.get(model.api_key_env, "").strip())

    def api_key(self, model: Model) -> str:
        """The model's key from the environment ("" for a keyless model)."""
        return self.env.get(model.api_key_env, "").strip() if model.needs_key else ""

    def resolve(self, model_id: str) -> Model:
        """The model to use for `model_id`; ModelChoiceError when unknown or not configured."""
        model = self.get(model_id)
        if model is None:
            raise ModelChoiceError("unknown_model", model_id)
        if not self.configured(model):
            raise ModelChoiceError("not_configured", model_id, model.api_key_env)
        return model

    def listing(self) -> list[dict]:
        """Every model as a JSON-safe dict, with its configured status."""
        return [
            {
                "id": m.id,
                "provider": m.provider,
                "name": m.name,
                "api_model": m.api_model,
                "context_window": m.context_window,
                "input_usd_per_mtok": m.input_usd_per_mtok,
                "output_usd_per_mtok": m.output_usd_per_mtok,
                "api_key_env": m.api_key_env,
                "base_url": m.base_url or None,
                "configured": self.configured(m),
                "configure_hint": "" if self.configured(m) else m.configure_hint(),
            }
            for m in self.models
        ]


def resolve_metric_model(
    catalogue: Catalogue, metric_model: str | None, reflection_model: str | None
) -> Model | None:
    """The docs' rule: the metric model, or the reflection model when none is chosen.

    Every chosen id is checked (ModelChoiceError); None when neither is chosen, which
    leaves llm() answering "no_metric_model".
    """
    chosen = [catalogue.resolve(i) if i else None for i in (metric_model, reflection_model)]
    return chosen[0] or chosen[1]


def load_catalogue(path: str | Path, env: Mapping[str, str]) -> Catalogue:
    """Read and validate the catalogue at `path`; CatalogueError on any problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise CatalogueError(f"{path}: is not UTF-8 text") from None
    return parse_catalogue(text, env, source=str(path))


def parse_catalogue(text: str, env: Mapping[str, str], *, source: str = "catalogue") -> Catalogue:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{source}: not valid TOML: {exc}") from None
    unknown = set(data) - {"model"}
    if unknown:
        raise CatalogueError(f"{source}: unknown top-level keys {sorted(unknown)}")
    entries = data.get("model")
    if not isinstance(entries, list) or not entries:
        raise CatalogueError(f"{source}: no [[model]] entries")
    models: list[Model] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        model = _model(entry, f"{source}: model #{number}")
        if model.id in seen:
            raise CatalogueError(f"{source}: model {model.id}: duplicate id")
        seen.add(model.id)
        models.append(model)
    wanted = {m.api_key_env for m in models if m.api_key_env} | set(BASE_URL_VARIABLES)
    return Catalogue(models=tuple(models), env={k: env[k] for k in wanted if k in env})


def _model(entry: object, where: str) -> Model:
    if not isinstance(entry, dict):
        raise CatalogueError(f"{where}: is not a table")
    model_id = entry.get("id")
    if isinstance(model_id, str) and model_id:
        where = f"{where.rsplit(': ', 1)[0]}: model {model_id}"
    unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise CatalogueError(f"{where}: unknown keys {sorted(unknown)}")
    values = {}
    for key, kind in {**_REQUIRED, **_OPTIONAL}.items():
        if key not in entry:
            if key in _REQUIRED:
                raise CatalogueError(f"{where}: missing {key}")
            continue
        values[key] = _typed(entry[key], kind, f"{where}: {key}")
    if not _ID.fullmatch(values["id"]):
        raise CatalogueError(f'{where}: id must look like "vendor/model"')
    if values["provider"] not in PROVIDERS:
        raise CatalogueError(
            f"{where}: unknown provider {values['provider']!r} (use one of {', '.join(PROVIDERS)})"
        )
    if not values["name"].strip():
        raise CatalogueError(f"{where}: name is empty")
    for key in ("input_usd_per_mtok", "output_usd_per_mtok"):
        if values[key] < 0:
            raise CatalogueError(f"{where}: {key} is negative")
    for key in ("context_window", "max_output_tokens"):
        if key in values and values[key] <= 0:
            raise CatalogueError(f"{where}: {key} must be a positive integer")
    key_env = values["api_key_env"]
    if key_env and not _ENV_NAME.fullmatch(key_env):
        raise CatalogueError(f"{where}: api_key_env {key_env!r} is not a variable name")
    base_url = values.get("base_url", "")
    if values["provider"] == "openai_compatible":
        if not base_url:
            raise CatalogueError(f"{where}: missing base_url (needed for openai_compatible)")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise CatalogueError(f"{where}: base_url {base_url!r} is not an http(s) URL")
    else:
        if base_url:
            raise CatalogueError(
                f"{where}: base_url is only for openai_compatible; "
                f"set {values['provider'].upper()}_BASE_URL instead"
            )
        if not key_env:
            raise CatalogueError(f"{where}: api_key_env is empty")
    api_model = values.get("api_model") or values["id"].split("/", 1)[1]
    return Model(
        id=values["id"],
        provider=values["provider"],
        name=values["name"].strip(),
        api_model=api_model,
        context_window=values["context_window"],
        input_usd_per_mtok=values["input_usd_per_mtok"],
        output_usd_per_mtok=values["output_usd_per_mtok"],
        api_key_env=key_env,
        base_url=base_url.rstrip("/"),
        max_output_tokens=values.get("max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS),
    )


def _typed(value: object, kind: type, where: str) -> object:
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            raise CatalogueError(f"{where} must be a number")
        return float(value)
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise CatalogueError(f"{where} must be an integer")
        return value
    if not isinstance(value, str):
        raise CatalogueError(f"{where} must be a string")
    return value
