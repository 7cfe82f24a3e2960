"""The docs stay true: every metric example on every page, in every language, passes the
contract check on cases that fit it (the model-as-judge one against a test model server)."""

from __future__ import annotations

import pytest

from contract.cases import case_from_dict
from contract.engine import run_check
from docs_site import pages
from metrics.starters import FIELD_CASES, LABEL_CASES
from providers.catalogue import parse_catalogue
from providers.gateway import ModelGateway
from tests.providers.conftest import FAST_RETRY, OPENAI_KEY, PLENTY, TEST_CATALOGUE
from tests.providers.fakes import FakeProvider

EXAMPLES = [
    (language, slug, number, source)
    for language in pages.LANGUAGES
    for slug in pages.SLUGS
    for number, source in enumerate(pages.load(language, slug).examples)
]
JUDGE_CASES = [
    {"input": {"question": "What is the capital of France?"}, "output": answer}
    for answer in ("Paris", "Lyon", "Paris")
]


def test_the_docs_have_the_four_scorer_examples_in_every_language():
    for language in pages.LANGUAGES:
        assert len(pages.load(language, "concepts/scorers").examples) >= 4
    sources = {source for _l, _s, _n, source in EXAMPLES}
    # The examples are code: the same in every language.
    english = set(pages.load("en", "concepts/scorers").examples)
    assert english <= sources
    for language in ("es", "hi"):
        assert set(pages.load(language, "concepts/scorers").examples) == english


def _cases_for(source: str) -> list[dict]:
    if "llm(" in source:
        return JUDGE_CASES
    if 'expected["fields"]' in source:
        return list(FIELD_CASES)
    return list(LABEL_CASES)


@pytest.mark.parametrize(
    ("language", "slug", "number", "source"),
    EXAMPLES,
    ids=[f"{language}-{slug}-{number}" for language, slug, number, _ in EXAMPLES],
)
def test_example_passes_the_contract_check(language, slug, number, source):
    cases = [case_from_dict(case) for case in _cases_for(source)]
    if "llm(" not in source:
        result = run_check(source, cases, timeout_s=20)
    else:
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
                result = run_check(source, cases, timeout_s=20, llm_for_case=gateway.for_case)
            assert len(server.requests) == 3
        finally:
            server.stop()
        assert [case.score for case in result.cases] == [1.0, 0.0, 1.0]
    report = result.to_dict()
    assert result.passed, (report["failed_stage"], [c["problem"] for c in report["cases"]])
