"""The "Model as judge, with labels" starter: a judge whose prompt is one module-level
constant, offered on the new-metric page, that passes the contract check on its own three
cases against a test model server."""

from __future__ import annotations

import ast
import json
from html import escape

import pytest

from contract import judge_prompt
from contract.cases import case_from_dict
from contract.engine import run_check
from metrics.models import Metric
from metrics.starters import JUDGE_WITH_LABELS, STARTERS
from providers.catalogue import parse_catalogue
from providers.gateway import ModelGateway
from tests.providers.conftest import FAST_RETRY, OPENAI_KEY, PLENTY, TEST_CATALOGUE
from tests.providers.fakes import FakeProvider

STARTER = STARTERS["judge_with_labels"]


def module_constants(source: str) -> dict[str, object]:
    """The module-level NAME = "literal" assignments of a source."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def test_the_judges_prompt_is_one_module_level_string_that_llm_is_called_with():
    prompt = module_constants(JUDGE_WITH_LABELS)["JUDGE_PROMPT"]
    assert isinstance(prompt, str) and "PASS" in prompt and "FAIL" in prompt
    assert "llm(JUDGE_PROMPT," in JUDGE_WITH_LABELS
    # The constant "Improve the judge against the human labels" rewrites.
    found = judge_prompt.find_judge_prompt(JUDGE_WITH_LABELS)
    assert isinstance(found, judge_prompt.JudgePrompt)
    assert (found.name, found.value) == ("JUDGE_PROMPT", prompt)
    # Its cases need no expected value: a judge reads the question and the answer.
    assert [case["expected"] for case in STARTER.cases] == [None, None, None]
    assert all("question" in case["input"] for case in STARTER.cases)


def test_the_starter_passes_the_contract_check_on_its_own_cases():
    cases = [case_from_dict(case) for case in STARTER.cases]
    server = FakeProvider(openai_key=OPENAI_KEY).start()
    try:
        env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{server.url}/v1"}
        catalogue = parse_catalogue(TEST_CATALOGUE.replace("{base}", server.url), env)
        with ModelGateway(
            catalogue.resolve("openai/test-gpt"),
            env=env,
            limits=PLENTY,
            timeout_s=5,
            retry=FAST_RETRY,
        ) as gateway:
            result = run_check(STARTER.source, cases, timeout_s=20, llm_for_case=gateway.for_case)
        # The judge was sent the prompt constant as its instructions, once a case.
        assert len(server.requests) == 3
        assert all(
            "You grade an answer to a question." in json.dumps(request.body)
            for request in server.requests
        )
    finally:
        server.stop()
    report = result.to_dict()
    assert result.passed, (report["failed_stage"], [c["problem"] for c in report["cases"]])
    # The test judge passes only "Paris": the first answer passes, the other two fail.
    assert [case.score for case in result.cases] == [1.0, 0.0, 0.0]


@pytest.mark.django_db
def test_the_new_metric_page_offers_it_and_creates_it_with_its_cases(owner_client, owner):
    page = owner_client.get("/en/metrics/new/").content.decode()
    assert '<option value="judge_with_labels">Model as judge, with labels</option>' in page
    assert escape(str(STARTER.description)) in page
    response = owner_client.post(
        "/en/metrics/new/", {"name": "judge", "starter": "judge_with_labels"}
    )
    metric = Metric.objects.get(owner=owner)
    assert response["Location"] == f"/en/metrics/{metric.pk}/"
    assert metric.latest_version.source == JUDGE_WITH_LABELS
    assert metric.cases == [dict(case) for case in STARTER.cases]
