"""The catalogue: the shipped list, configured status, strict validation, the model rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from providers.catalogue import (
    CatalogueError,
    ModelChoiceError,
    load_catalogue,
    parse_catalogue,
    resolve_metric_model,
)

SHIPPED = Path(__file__).resolve().parents[2] / "providers" / "catalogue.toml"

GOOD = """
[[model]]
id = "openai/gpt-x"
provider = "openai"
name = "GPT X"
context_window = 1000
input_usd_per_mtok = 1.5
output_usd_per_mtok = 6
api_key_env = "OPENAI_API_KEY"
"""


def test_the_shipped_catalogue_loads_with_the_current_models():
    catalogue = load_catalogue(SHIPPED, {})
    ids = {m.id for m in catalogue.models}
    assert {
        "openai/gpt-4.1",
        "openai/gpt-4.1-mini",
        "openai/gpt-4.1-nano",
        "openai/gpt-4o",
        "openai/gpt-4o-mini",
        "openai/o4-mini",
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-opus-4-1",
        "ollama/llama3.1",
    } <= ids
    mini = catalogue.get("openai/gpt-4.1-mini")
    assert (mini.api_model, mini.input_usd_per_mtok, mini.output_usd_per_mtok) == (
        "gpt-4.1-mini",
        0.4,
        1.6,
    )
    ollama = catalogue.get("ollama/llama3.1")
    assert (ollama.base_url, ollama.api_model, ollama.cost_usd(10**6, 10**6)) == (
        "http://127.0.0.1:11434/v1",
        "llama3.1",
        0,
    )


def test_configured_means_the_key_variable_is_set_and_not_empty():
    catalogue = load_catalogue(SHIPPED, {"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "  "})
    status = {m["id"]: m for m in catalogue.listing()}
    assert status["openai/gpt-4o"]["configured"] is True
    assert status["openai/gpt-4o"]["configure_hint"] == ""
    assert status["anthropic/claude-sonnet-4-5"]["configured"] is False
    assert status["anthropic/claude-sonnet-4-5"]["configure_hint"] == (
        "set the environment variable ANTHROPIC_API_KEY"
    )
    assert status["ollama/llama3.1"]["configured"] is True  # needs no key
    assert catalogue.api_key(catalogue.get("openai/gpt-4o")) == "sk-1"


def test_resolve_refuses_unknown_and_not_configured_models():
    catalogue = load_catalogue(SHIPPED, {"OPENAI_API_KEY": "sk-1"})
    assert catalogue.resolve("openai/gpt-4o").id == "openai/gpt-4o"
    with pytest.raises(ModelChoiceError) as caught:
        catalogue.resolve("anthropic/claude-haiku-4-5")
    assert (caught.value.code, caught.value.key_env) == ("not_configured", "ANTHROPIC_API_KEY")
    assert caught.value.message == "ANTHROPIC_API_KEY"
    with pytest.raises(ModelChoiceError) as caught:
        catalogue.resolve("openai/gpt-9")
    assert (caught.value.code, caught.value.message) == ("unknown_model", "openai/gpt-9")


def test_the_metric_model_or_else_the_reflection_model():
    catalogue = load_catalogue(SHIPPED, {"OPENAI_API_KEY": "sk-1"})
    assert resolve_metric_model(catalogue, None, None) is None
    assert resolve_metric_model(catalogue, "openai/gpt-4o", None).id == "openai/gpt-4o"
    assert resolve_metric_model(catalogue, None, "openai/o4-mini").id == "openai/o4-mini"
    chosen = resolve_metric_model(catalogue, "openai/gpt-4o-mini", "openai/o4-mini")
    assert chosen.id == "openai/gpt-4o-mini"
    with pytest.raises(ModelChoiceError):  # a chosen reflection model is checked too
        resolve_metric_model(catalogue, "openai/gpt-4o", "anthropic/claude-opus-4-1")


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (('provider = "openai"', 'provider = "azure"'), "model openai/gpt-x: unknown provider 'azure'"),
        (("input_usd_per_mtok = 1.5", "input_usd_per_mtok = -1"), "model openai/gpt-x: input_usd_per_mtok is negative"),
        (("output_usd_per_mtok = 6", "output_usd_per_mtok = nan"), "model openai/gpt-x: output_usd_per_mtok must be a number"),
        (('name = "GPT X"\n', ""), "model openai/gpt-x: missing name"),
        (("context_window = 1000", "context_window = 0"), "model openai/gpt-x: context_window must be a positive integer"),
        (("context_window = 1000", "context_window = true"), "model openai/gpt-x: context_window must be an integer"),
        (("context_window = 1000", 'context_window = "1000"'), "model openai/gpt-x: context_window must be an integer"),
        (('api_key_env = "OPENAI_API_KEY"', 'api_key_env = ""'), "model openai/gpt-x: api_key_env is empty"),
        (('api_key_env = "OPENAI_API_KEY"', 'api_key_env = "OPENAI KEY"'), "is not a variable name"),
        (('api_key_env = "OPENAI_API_KEY"', 'api_key_env = "K"\nbase_url = "http://x/v1"'), "base_url is only for openai_compatible"),
        (('api_key_env = "OPENAI_API_KEY"', 'api_key_env = "K"\ntemperature = 0'), "model openai/gpt-x: unknown keys ['temperature']"),
        (('id = "openai/gpt-x"', 'id = "gpt-x"'), 'model gpt-x: id must look like "vendor/model"'),
        (('id = "openai/gpt-x"\n', ""), "model #1: missing id"),
    ],
)  # fmt: skip
def test_validation_names_the_model(change, error):
    with pytest.raises(CatalogueError) as caught:
        parse_catalogue(GOOD.replace(*change), {}, source="cat.toml")
    assert error in str(caught.value)
    assert str(caught.value).startswith("cat.toml: ")


def test_duplicate_ids_are_refused():
    with pytest.raises(CatalogueError, match="model openai/gpt-x: duplicate id"):
        parse_catalogue(GOOD + GOOD, {})


def test_openai_compatible_needs_an_http_base_url():
    local = GOOD.replace('provider = "openai"', 'provider = "openai_compatible"')
    with pytest.raises(CatalogueError, match="missing base_url"):
        parse_catalogue(local, {})
    with pytest.raises(CatalogueError, match="is not an http"):
        parse_catalogue(local + 'base_url = "ftp://x"\n', {})
    keyless = local.replace('"OPENAI_API_KEY"', '""') + 'base_url = "http://h:1/v1/"\n'
    model = parse_catalogue(keyless, {}).models[0]
    assert (model.base_url, model.needs_key) == ("http://h:1/v1", False)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "no [[model]] entries"),
        ("[[model]\n", "not valid TOML"),
        ("version = 1\n" + GOOD, "unknown top-level keys ['version']"),
        ("model = 3\n", "no [[model]] entries"),
    ],
)
def test_file_level_errors(text, error):
    with pytest.raises(CatalogueError, match=error.replace("[", r"\[")):
        parse_catalogue(text, {})


def test_an_unreadable_file(tmp_path):
    with pytest.raises(CatalogueError, match="cannot be read"):
        load_catalogue(tmp_path / "missing.toml", {})


def test_the_catalogue_keeps_only_its_variables_and_never_shows_them():
    env = {"OPENAI_API_KEY": "sk-secret-1", "DJANGO_SECRET_KEY": "x", "OPENAI_BASE_URL": "http://h"}
    catalogue = load_catalogue(SHIPPED, env)
    assert dict(catalogue.env) == {"OPENAI_API_KEY": "sk-secret-1", "OPENAI_BASE_URL": "http://h"}
    assert "sk-secret-1" not in repr(catalogue)
