"""gepa evaluators as gepa calls them, and contract-signature metrics with a framework's
returns: converted, each scores every case, right or wrong, as the original does when
gepa's default adapter hands it its data instance, in plain Python and in the sandbox."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

from contract.cases import Case
from contract.convert import convert
from contract.engine import run_check
from tests.public_metrics import METRICS, load_original

ENTRIES = {entry.name: entry for entry in METRICS}

CONTAINS = ENTRIES["gepa_contains_answer"].file.read_text()

# A dataset as a user has it: the question, the expected answer and an explanation; no
# column is named as gepa's DefaultDataInst keys are.
ROWS = [
    ({"question": "Capital of Peru?"}, "It is Lima.", {"answer": "Lima", "why": "Lima, 1535."}),
    ({"question": "Capital of Chile?"}, "Valparaíso", {"answer": "Santiago", "why": "Since 1541."}),
    ({"question": "2 + 2?"}, "", {"answer": "4", "why": "Arithmetic."}),
]


def _default_adapter_data(inputs: dict, expected: dict) -> dict:
    """What gepa's DefaultAdapter is given for such a row: DefaultDataInst(input=the
    question, answer=the answer, additional_context={the other columns as text})."""
    (question,) = inputs.values()
    context = {k: str(v) for k, v in expected.items() if k != "answer"}
    return {"input": question, "answer": expected["answer"], "additional_context": context}


def _namespace(source: str) -> dict:
    space: dict = {}
    exec(compile(source, "metric.py", "exec"), space)
    return space


def test_the_default_evaluator_scores_a_users_columns_as_gepa_would():
    conversion = convert(CONTAINS)
    score = _namespace(conversion.source)["score"]
    original = load_original(ENTRIES["gepa_contains_answer"])  # ContainsAnswerEvaluator()
    seen = set()
    for inputs, output, expected in ROWS:
        want = original(_default_adapter_data(inputs, expected), output)
        got = score(dict(inputs), output, dict(expected))
        assert got == (want.score, {"feedback": want.feedback})
        seen.add(want.score)
    assert seen == {0.0, 1.0}
    # The wrong answers' feedback carries the other columns, as gepa's additional context.
    wrong = score(dict(ROWS[1][0]), ROWS[1][1], dict(ROWS[1][2]))[1]["feedback"]
    assert "why: Since 1541." in wrong


def test_the_evaluators_constructor_defaults_are_kept():
    source = CONTAINS.replace("failure_score: float = 0.0", "failure_score: float = 0.25")
    score = _namespace(convert(source).source)["score"]
    assert score({"question": "q"}, "no", {"answer": "yes"})[0] == 0.25


def test_a_data_state_evaluator_reads_the_response_as_the_rollouts_last_message():
    source = textwrap.dedent(
        """
        def evaluate_response(data, state):
            text = state["messages"][-1].content
            if data["answer"] in text:
                return 1.0, f"Correct: {data['answer']}."
            return 0.0, f"Expected {data['answer']}; context: {data['additional_context']}"
        """
    )
    conversion = convert(source)
    assert conversion.framework == "gepa"
    score = _namespace(conversion.source)["score"]
    original = _namespace(source)["evaluate_response"]
    for inputs, output, expected in ROWS:
        message = SimpleNamespace(type="ai", content=output)
        want = original(_default_adapter_data(inputs, expected), {"messages": [message]})
        assert score(dict(inputs), output, dict(expected)) == (want[0], {"feedback": want[1]})


def test_a_data_response_function_and_several_input_columns():
    source = textwrap.dedent(
        """
        def judge(data, response):
            return float(response.strip() == data["answer"]), f"Asked: {data['input']}"
        """
    )
    score = _namespace(convert(source).source)["score"]
    got = score({"a": "2", "b": "3"}, "5", {"answer": "5"})
    assert got == (1.0, {"feedback": "Asked: a: 2\nb: 3"})


@pytest.mark.parametrize(
    ("returned", "want"),
    [
        (
            "dspy.Prediction(score=float(right), feedback=f\"Expected {expected['label']!r}.\")",
            'float(right), {"feedback": f"Expected {expected[\'label\']!r}."}',
        ),
        (
            '{"score": float(right), "feedback": "Checked the label."}',
            'float(right), {"feedback": "Checked the label."}',
        ),
        ("float(right)", 'float(right), {"feedback": ""}'),
    ],
)
def test_a_contract_signature_gets_its_returns_rewritten(returned, want):
    source = (
        "import dspy\n\n"
        "def score(input, output, expected=None):\n"
        '    right = output == expected["label"]\n'
        f"    return {returned}\n"
    )
    conversion = convert(source)
    assert conversion.changed
    assert f"    return {want}\n" in conversion.source
    assert "import dspy" not in conversion.source  # no longer used
    assert run_check(conversion.source, timeout_s=10).passed is True


def test_a_contract_metric_that_keeps_the_contract_is_left_alone():
    source = 'def score(input, output, expected=None):\n    return 1.0, {"feedback": "OK"}\n'
    conversion = convert(source)
    assert not conversion.changed and conversion.notes == []


def test_the_converted_evaluator_passes_the_check_in_the_sandbox_on_those_columns():
    cases = [Case(input=i, output=o, expected=e) for i, o, e in ROWS]
    result = run_check(convert(CONTAINS).source, cases, timeout_s=10)
    assert result.passed is True, [(c.status, c.problem, c.params) for c in result.cases]
    assert [c.score for c in result.cases] == [1.0, 0.0, 0.0]
