"""A prompt template artifact: filled safely with the input fields, answered by the task
model (the fake provider, through the real gateway), then scored."""

from __future__ import annotations

import pytest

from contract.artifacts import Artifact, ArtifactError
from contract.cases import Case
from contract.engine import run_check
from skynet import template
from tests.artifacts.conftest import dedent
from tests.providers.fakes import OPENAI_PATH, Reply, openai_reply

CASES = [
    Case(
        {"question": "What is the capital of France?", "style": "one word"},
        None,
        {"answer": "Paris"},
    ),
    Case(
        {"question": "What is the capital of Spain?", "style": "one word"},
        None,
        {"answer": "Madrid"},
    ),
]
METRIC = """
def score(input, output, expected):
    if output.strip() == expected["answer"]:
        return 1.0, {"feedback": "Right capital."}
    return 0.0, {"feedback": f"Expected {expected['answer']}, got {output.strip()}."}
"""
TEMPLATE = "Answer in {style}: {question} {{no field here}}"


def test_prompt_artifact_is_filled_answered_by_the_task_model_and_scored(provider, gateway):
    # The two cases run at once: each reply is kept for its own question.
    provider.queue(
        Reply(body=openai_reply("Paris", 1000, 250), when="France"),
        Reply(body=openai_reply("Lyon", 1000, 250), when="Spain"),
    )
    task = gateway("openai/test-gpt")
    result = run_check(
        dedent(METRIC),
        CASES,
        timeout_s=10,
        artifact=Artifact.prompt(TEMPLATE),
        task_llm_for_case=task.for_case,
    )
    first, second = result.cases
    assert (first.status, first.score) == ("valid", 1.0)
    assert (second.status, second.score, second.feedback) == (
        "valid",
        0.0,
        "Expected Madrid, got Lyon.",
    )
    assert [r.path for r in provider.requests] == [OPENAI_PATH, OPENAI_PATH]
    (sent,) = [r.body["messages"] for r in provider.requests if "France" in r.user]
    assert sent == [
        {
            "role": "user",
            "content": "Answer in one word: What is the capital of France? {no field here}",
        }
    ]
    # 1000 in and 250 out at $2 / $8 per million tokens: $0.004 a case.
    for case in result.cases:
        assert case.run["usage"]["model_calls"] == 1
        assert case.run["usage"]["cost_usd"] == pytest.approx(0.004)
        assert case.observation["cost_usd"] == pytest.approx(0.004)
        assert (case.observation["input_tokens"], case.observation["output_tokens"]) == (1000, 250)
        assert case.usage is None  # the metric made no call
    assert first.run["output_repr"] == "'Paris'"


def test_task_and_metric_models_are_two_gateways(provider, gateway):
    # The task model (OpenAI) answers "Paris"; the metric model (Anthropic) is the judge.
    provider.queue(Reply(body=openai_reply("Paris", 10, 2)))
    task, judge = gateway("openai/test-gpt"), gateway("anthropic/test-claude")
    result = run_check(
        dedent(
            """
            from skynet import llm
            def score(input, output, expected):
                verdict = llm("Answer PASS or FAIL.", input=f"Answer: {output}")
                return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
            """
        ),
        CASES[:1],
        timeout_s=10,
        artifact=Artifact.prompt("{question}"),
        task_llm_for_case=task.for_case,
        llm_for_case=judge.for_case,
    )
    case = result.cases[0]
    assert (case.score, case.feedback[:4]) == (1.0, "PASS")
    assert [r.body["model"] for r in provider.requests] == ["gpt-test", "claude-test"]
    assert case.run["usage"]["input_tokens"] == 10
    assert case.usage["model_calls"] == 1 and case.usage["input_tokens"] == 12
    assert task.total()["model_calls"] == 1 and judge.total()["model_calls"] == 1


def test_unknown_template_field_is_a_case_error(provider, gateway):
    result = run_check(
        dedent(METRIC),
        CASES[:1],
        timeout_s=10,
        artifact=Artifact.prompt("Answer {question} for {country}"),
        task_llm_for_case=gateway("openai/test-gpt").for_case,
    )
    case = result.cases[0]
    assert (case.status, case.problem, case.params) == (
        "error",
        "template_unknown_field",
        {"field": "country"},
    )
    assert provider.requests == []


@pytest.mark.parametrize(
    ("text", "code", "field"),
    [
        ("{0.__class__}", "template_field_not_plain", "0.__class__"),
        ("{a.b}", "template_field_not_plain", "a.b"),
        ("{question.__class__.__init__.__globals__}", "template_field_not_plain", None),
        ("{a[0]}", "template_field_not_plain", "a[0]"),
        ("{}", "template_field_not_plain", ""),
        ("{0}", "template_field_not_plain", "0"),
        ("{a!r}", "template_field_not_plain", "a!r"),
        ("{a:{b}}", "template_field_not_plain", "a:{b}"),
        ("{a", "template_syntax_error", None),
        ("a }", "template_syntax_error", None),
    ],
)
def test_unsafe_or_broken_template_fields_are_refused(text, code, field):
    with pytest.raises(template.TemplateError) as info:
        template.fill(text, {"a": "x", "b": "y", "question": "q"})
    assert info.value.code == code
    if field is not None:
        assert info.value.params["field"] == field
    with pytest.raises(ArtifactError) as refused:
        run_check(dedent(METRIC), CASES[:1], timeout_s=10, artifact=Artifact.prompt(text))
    assert refused.value.code == code


def test_template_fill_rules():
    assert template.fill("{a} and {b} {{x}}", {"a": "1", "b": [1, "é"]}) == '1 and [1, "é"] {x}'
    assert template.fields("{b}{a}{b}") == ["b", "a"]
    assert template.fill("no fields", {}) == "no fields"
    with pytest.raises(template.TemplateError) as info:
        template.fill("{missing}", {"a": 1})
    assert (info.value.code, info.value.params) == ("template_unknown_field", {"field": "missing"})
