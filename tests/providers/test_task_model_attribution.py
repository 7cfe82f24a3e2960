"""A check whose task model cannot be reached says so, naming the model, rather than
counting cases that "did not return a value"."""

from __future__ import annotations

import pytest

from contract.artifacts import Artifact
from contract.cases import Case
from contract.engine import run_check
from providers.catalogue import parse_catalogue
from providers.gateway import ModelGateway
from tests.providers.conftest import FAST_RETRY, PLENTY, TEST_CATALOGUE
from tests.providers.test_reachability import closed_port_url
from wording import words

LABEL_METRIC = """
def score(input, output, expected=None):
    return (1.0 if "billing" in str(output).lower() else 0.0), {"feedback": "Looked for billing."}
"""
CASES = [Case(input={"question": q}, output="") for q in ("Charged twice.", "App crashes.", "Hi")]
TEMPLATE = "Classify this support ticket as billing, bug or account: {question}"


@pytest.fixture
def dead_task_model():
    dead = closed_port_url()
    catalogue = parse_catalogue(TEST_CATALOGUE.replace("{base}/v1", dead), {})
    gateway = ModelGateway(
        catalogue.resolve("local/free"),
        env=catalogue.env,
        limits=PLENTY,
        timeout_s=1.0,
        retry=FAST_RETRY,
    )
    yield gateway, dead
    gateway.close()


def test_an_unreachable_task_model_is_named_as_the_cause(dead_task_model):
    gateway, dead = dead_task_model
    result = run_check(
        LABEL_METRIC.lstrip("\n"),
        CASES,
        timeout_s=20,
        artifact=Artifact.prompt(TEMPLATE),
        task_llm_for_case=gateway.for_case,
        task_model="local/free",
    )
    assert result.passed is False and result.failed_stage == "call"
    call = result.stage("call")
    assert call.problem == "task_model_error"
    assert call.params["model"] == "local/free"
    assert call.params["code"] == "unreachable"
    assert call.params["cases"] == [0, 1, 2] and call.params["count"] == 3
    assert dead.removesuffix("/v1") in call.params["message"]
    sentence = words(call.problem, call.params)
    assert sentence.startswith("The task model local/free could not be reached: could not connect")
    assert "did not return a value" not in sentence
    # Each row still says what its run met.
    assert {(c.status, c.problem, c.params["code"]) for c in result.cases} == {
        ("error", "run_model_error", "unreachable")
    }


def test_a_failure_of_the_checks_own_making_is_not_blamed_on_the_model():
    program = "from skynet import llm\n\ndef run(artifact, input):\n    return llm('label')\n"
    result = run_check(
        LABEL_METRIC.lstrip("\n"), CASES[:1], timeout_s=20, artifact=Artifact.python(program)
    )
    call = result.stage("call")
    assert (call.problem, call.params["count"]) == ("cases_failed", 1)  # no_task_model


def test_the_words_for_a_task_model_that_answered_with_an_error():
    params = {"model": "openai/gpt-4.1", "code": "unauthorized", "message": "HTTP 401: bad key"}
    assert words("task_model_error", params) == (
        "The task model openai/gpt-4.1 failed: The model provider refused the API key: "
        "HTTP 401: bad key"
    )
