"""Fixtures for the models layer: a fake provider on 127.0.0.1, a catalogue pointing at it,
and a check runner that answers skynet.llm() through the real gateway and sandbox."""

from __future__ import annotations

import textwrap

import pytest

from contract.cases import Case
from contract.engine import run_check
from providers.budget import Limits
from providers.catalogue import Catalogue, parse_catalogue
from providers.clients import RetryPolicy
from providers.gateway import ModelGateway
from tests.providers.fakes import FakeProvider

OPENAI_KEY = "sk-test-openai-4f1c9a7e2b"
ANTHROPIC_KEY = "sk-ant-test-8d3e6b0a51"

# Known prices, so the cost arithmetic is checked against numbers written here.
TEST_CATALOGUE = """
[[model]]
id = "openai/test-gpt"
provider = "openai"
name = "Test GPT"
api_model = "gpt-test"
context_window = 128000
input_usd_per_mtok = 2.0
output_usd_per_mtok = 8.0
api_key_env = "OPENAI_API_KEY"

[[model]]
id = "anthropic/test-claude"
provider = "anthropic"
name = "Test Claude"
api_model = "claude-test"
context_window = 200000
input_usd_per_mtok = 3.0
output_usd_per_mtok = 15.0
api_key_env = "ANTHROPIC_API_KEY"
max_output_tokens = 512

[[model]]
id = "local/free"
provider = "openai_compatible"
name = "Local"
context_window = 8192
input_usd_per_mtok = 0
output_usd_per_mtok = 0
api_key_env = ""
base_url = "{base}/v1"
"""

FAST_RETRY = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, max_retry_after_s=0.3)
MODEL_TIMEOUT_S = 1.0
PLENTY = Limits(max_calls=100, max_tokens=1_000_000, max_usd=10.0)

QUESTION = {"question": "What is the capital of France?"}
PASS_AND_FAIL = [Case(input=QUESTION, output="Paris"), Case(input=QUESTION, output="Lyon")]

# The docs' model-as-judge example, as written there.
JUDGE_METRIC = """
from skynet import llm


def score(input, output, expected=None):
    verdict = llm(
        "Answer PASS or FAIL, then give one sentence of reasons.",
        input=f"Question: {input['question']}\\nAnswer: {output}",
    )
    passed = str(verdict).strip().upper().startswith("PASS")
    return (1.0 if passed else 0.0), {"feedback": str(verdict)}
"""

# A metric that lets llm()'s ModelError end the case.
ONE_CALL_METRIC = """
from skynet import llm

def score(input, output, expected=None):
    return 1.0, {"feedback": llm("Grade this answer.", input=str(output))}
"""


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Shadow the project-wide Django fixture: the models layer is Django-free."""
    yield


@pytest.fixture
def provider():
    server = FakeProvider(openai_key=OPENAI_KEY, anthropic_key=ANTHROPIC_KEY).start()
    yield server
    server.stop()


@pytest.fixture
def env(provider) -> dict:
    """The parent's environment: keys, and base URLs pointing at the fake provider."""
    return {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": f"{provider.url}/v1",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": provider.url,
    }


@pytest.fixture
def catalogue(provider, env) -> Catalogue:
    return parse_catalogue(TEST_CATALOGUE.replace("{base}", provider.url), env)


@pytest.fixture
def gateway(catalogue):
    """gateway(model_id, limits=PLENTY) -> a ModelGateway with fast retries, closed after."""
    made = []

    def make(model_id: str, limits: Limits = PLENTY, timeout_s: float = MODEL_TIMEOUT_S):
        gw = ModelGateway(
            catalogue.resolve(model_id),
            env=catalogue.env,
            limits=limits,
            timeout_s=timeout_s,
            retry=FAST_RETRY,
        )
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.close()


@pytest.fixture
def check():
    """check(source, gateway, cases=PASS_AND_FAIL[:1], timeout_s=10) through the sandbox."""

    def run(source: str, gw: ModelGateway | None, *, cases=None, timeout_s: float = 10):
        return run_check(
            textwrap.dedent(source).lstrip("\n"),
            cases if cases is not None else PASS_AND_FAIL[:1],
            timeout_s=timeout_s,
            llm_for_case=gw.for_case if gw is not None else None,
        )

    return run
