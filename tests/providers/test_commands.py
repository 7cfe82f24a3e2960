"""`manage.py list_models` and `manage.py check_metric --metric-model`, run as a user runs them,
with the key in the command's environment and OPENAI_BASE_URL at the fake provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.providers.conftest import JUDGE_METRIC, OPENAI_KEY
from tests.providers.fakes import OPENAI_PATH

CASES = [
    {"input": {"question": "What is the capital of France?"}, "output": "Paris"},
    {"input": {"question": "What is the capital of France?"}, "output": "Lyon"},
    {"input": {"question": "What is the capital of France?"}, "output": "Paris, France"},
]
REPORT_KEYS = {
    "passed",
    "failed_stage",
    "sandbox_mode",
    "layers",
    "looks_like",
    "looks_like_message",
    "stages",
    "cases",
    "hints",
}
CASE_KEYS = {
    "index",
    "status",
    "score",
    "feedback",
    "scores",
    "problem",
    "message",
    "shape",
    "fix",
    "duration_ms",
}
MODEL_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


def manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def command_env(provider) -> dict:
    """This process's environment without any model variable, plus the OpenAI key and
    a base URL at the fake provider."""
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.pop("SKYNET_MODEL_CATALOGUE", None)
    return {**env, "OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{provider.url}/v1"}


@pytest.fixture
def files(tmp_path):
    metric = tmp_path / "metric.py"
    metric.write_text(JUDGE_METRIC)
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return str(metric), str(cases)


def test_models_json_lists_the_catalogue_and_what_is_configured(command_env):
    result = manage("list_models", "--json", env=command_env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    models = {m["id"]: m for m in report["models"]}
    gpt = models["openai/gpt-4.1-mini"]
    assert gpt == {
        "id": "openai/gpt-4.1-mini",
        "provider": "openai",
        "name": "GPT-4.1 mini",
        "api_model": "gpt-4.1-mini",
        "context_window": 1047576,
        "input_usd_per_mtok": 0.4,
        "output_usd_per_mtok": 1.6,
        "api_key_env": "OPENAI_API_KEY",
        "base_url": None,
        "configured": True,
        "configure_hint": "",
    }
    sonnet = models["anthropic/claude-sonnet-4-5"]
    assert sonnet["configured"] is False
    assert sonnet["configure_hint"] == "set the environment variable ANTHROPIC_API_KEY"
    assert models["ollama/llama3.1"]["configured"] is True

    text = manage("list_models", env=command_env)
    assert text.returncode == 0
    assert "openai/gpt-4.1-mini" in text.stdout and "GPT-4.1 mini" in text.stdout
    assert "set the environment variable ANTHROPIC_API_KEY" in text.stdout


def test_a_broken_catalogue_is_a_usage_error(command_env, tmp_path):
    broken = tmp_path / "catalogue.toml"
    broken.write_text('[[model]]\nid = "x/y"\nprovider = "azure"\n')
    result = manage("list_models", env={**command_env, "SKYNET_MODEL_CATALOGUE": str(broken)})
    assert result.returncode == 2
    assert "model x/y" in result.stderr


def test_check_metric_with_a_metric_model(command_env, files, provider):
    metric, cases = files
    args = ("check_metric", metric, "--cases", cases, "--metric-model", "openai/gpt-4.1-mini")
    result = manage(*args, "--json", env=command_env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == REPORT_KEYS  # the documented shape, unchanged
    assert all(set(case) == CASE_KEYS for case in report["cases"])
    assert [c["score"] for c in report["cases"]] == [1.0, 0.0, 1.0]
    assert report["cases"][1]["feedback"].startswith("FAIL ")

    assert [r.path for r in provider.requests] == [OPENAI_PATH] * 3
    assert provider.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert provider.requests[0].body["model"] == "gpt-4.1-mini"

    text = manage(*args, env=command_env)
    assert text.returncode == 0, text.stderr
    # 12 input and 7 output tokens per call at $0.40 / $1.60 per million.
    assert "model calls: 1, tokens: 12 in / 7 out, cost: $0.000016, model time: " in text.stdout


def test_the_reflection_model_answers_when_no_metric_model_is_chosen(command_env, files, provider):
    metric, cases = files
    result = manage(
        "check_metric", metric, "--cases", cases, "--reflection-model", "openai/o4-mini",
        "--json", env=command_env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert {r.body["model"] for r in provider.requests} == {"o4-mini"}


def test_the_budget_comes_from_the_settings(command_env, tmp_path, provider):
    metric = tmp_path / "flood.py"
    metric.write_text(
        "from skynet import llm\n"
        "def score(input, output):\n"
        "    while True:\n"
        "        llm('again', input='x')\n"
    )
    env = {**command_env, "SKYNET_CHECK_MAX_MODEL_CALLS": "2"}
    result = manage(
        "check_metric", str(metric), "--metric-model", "openai/gpt-4o", "--json", env=env
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [c["problem"] for c in report["cases"]] == ["model_error"] * 3
    assert report["cases"][0]["message"] == (
        "This check's budget for model calls is used up (max_calls=2, used 2). "
        "Call llm() fewer times."
    )
    assert len(provider.requests) == 2


@pytest.mark.parametrize(
    ("flag", "model", "words"),
    [
        ("--metric-model", "anthropic/claude-haiku-4-5", "set the environment variable ANTHROPIC_API_KEY"),
        ("--reflection-model", "anthropic/claude-sonnet-4-5", "is not configured"),
        ("--metric-model", "openai/gpt-9000", "Unknown model openai/gpt-9000."),
    ],
)  # fmt: skip
def test_an_unusable_model_is_a_usage_error(command_env, files, provider, flag, model, words):
    metric, _cases = files
    result = manage("check_metric", metric, flag, model, "--json", env=command_env)
    assert result.returncode == 2
    assert words in result.stderr
    assert "python manage.py list_models" in result.stderr
    assert result.stdout == "" and provider.requests == []
