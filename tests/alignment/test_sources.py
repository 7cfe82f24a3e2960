"""The alignment run's two generated files: the program runs the judge metric's own source
with the artifact as its prompt, its llm() answered by the task model, in the real
sandbox; the agreement metric scores 1 where the judge says what the person said, reads
the judge's score as the evaluation's page does, and says how they disagree."""

from __future__ import annotations

import ast
import random

import pytest

from alignment import sources
from contract import agreement
from contract.artifacts import Artifact
from contract.cases import case_from_dict
from contract.engine import run_check
from tests.alignment import world

LABELS = sources.Columns(
    inputs=("question",),
    output="answer",
    expected=(),
    human={
        "label_column": "verdict",
        "note_column": "why",
        "classes": ["fail", "pass"],
        "threshold": 0.5,
    },
)


def case(i: int) -> dict:
    """Row i as the draft's case: every column the program reads is input, the person's
    columns are expected."""
    return {
        "input": {"question": f"What is {i} times 3?", "answer": world.answer(i)},
        "output": None,
        "expected": {"verdict": world.verdict(i), "why": world.note(i) or None},
    }


def check(metric: str, program: str, prompt: str, cases: list[dict], handler):
    return run_check(
        metric,
        [case_from_dict(c) for c in cases],
        timeout_s=30,
        artifact=Artifact.python(program, prompt),
        task_llm_for_case=lambda index: handler,
    )


def namespace(source: str) -> dict:
    found: dict = {}
    exec(compile(source, "metric.py", "exec"), found)
    return found


def test_the_sources_are_python_that_names_its_settings():
    program = sources.program_source(world.JUDGE, "JUDGE_PROMPT", LABELS, "judge")
    metric = sources.agreement_source(LABELS)
    ast.parse(program)
    ast.parse(metric)
    loaded = namespace(program)
    assert loaded["INPUT_COLUMNS"] == ["question"] and loaded["OUTPUT_COLUMN"] == "answer"
    # The judge's source as it was, but for the prompt's literal: a name the program sets.
    judge = loaded["JUDGE_SOURCE"]
    assert f"JUDGE_PROMPT = {sources.PROMPT_NAME}" in judge
    assert judge.replace(f"JUDGE_PROMPT = {sources.PROMPT_NAME}", "") == world.JUDGE.replace(
        'JUDGE_PROMPT = """You grade answers to questions.\nSay PASS if the answer is right, else FAIL, then why."""',
        "",
    )


def test_in_the_sandbox_the_judge_runs_with_the_artifact_as_its_prompt():
    program = sources.program_source(world.JUDGE, "JUDGE_PROMPT", LABELS, "judge")
    metric = sources.agreement_source(LABELS)
    rows = [0, 1, 3]  # cites a source, cites none, cites none
    seed = world.JudgeHandler()
    result = check(metric, program, world.JUDGE_PROMPT, [case(i) for i in rows], seed)
    assert [c.status for c in result.cases] == ["valid"] * 3, result.to_dict()
    # The seed prompt passes every answer; people fail the two without a source.
    assert [c.score for c in result.cases] == [1.0, 0.0, 0.0]
    assert result.cases[1].feedback == (
        "The judge scored 1 (pass) but the person said fail. The person's note: Right, but "
        "no source: we fail those. The judge's feedback: PASS: the answer is right."
    )
    assert result.cases[0].feedback.startswith(
        "The judge scored 1 (pass) and the person said pass too."
    )
    # llm() in the program went to the task model, with the artifact as the instructions.
    assert [r["instructions"] for r in seed.requests] == [world.JUDGE_PROMPT] * 3
    assert f"Question: What is 1 times 3?\nAnswer: {world.answer(1)}" in {
        r["input"] for r in seed.requests
    }
    aligned = world.JudgeHandler()
    better = f"{world.JUDGE_PROMPT}\n{world.RULE}"
    result = check(metric, program, better, [case(i) for i in rows], aligned)
    assert [c.score for c in result.cases] == [1.0, 1.0, 1.0], result.to_dict()
    assert {r["instructions"] for r in aligned.requests} == {better}


def test_a_judge_with_expected_values_and_two_parameters_gets_its_case():
    judge = (
        "from skynet import llm\n"
        "RUBRIC = 'Compare with the reference.'\n"
        "def score(input, output, expected=None):\n"
        "    said = llm(RUBRIC, input={'q': input['q'], 'a': output, 'ref': expected})\n"
        "    return 0.9, {'feedback': said}\n"
    )
    columns = sources.Columns(
        inputs=("q",),
        output="a",
        expected=("ref",),
        human={"score_column": "stars", "note_column": "", "scale": [1.0, 5.0], "threshold": 0.5},
    )
    program = sources.program_source(judge, "RUBRIC", columns, "graded")
    metric = sources.agreement_source(columns)
    handler = world.JudgeHandler()
    cases = [
        {"input": {"q": "2+2", "a": "4", "ref": "4"}, "output": None, "expected": {"stars": 5}},
        {"input": {"q": "2+3", "a": "6", "ref": None}, "output": None, "expected": {"stars": 2}},
    ]
    result = check(metric, program, "Compare with the reference, strictly.", cases, handler)
    assert [c.status for c in result.cases] == ["valid", "valid"], result.to_dict()
    # 0.9 against 5 of 1..5 (1.0), then against 2 (0.25).
    assert result.cases[0].score == pytest.approx(0.9)
    assert result.cases[1].score == pytest.approx(0.35)
    assert "too generous by 0.65" in result.cases[1].feedback
    assert "too harsh by 0.10" in result.cases[0].feedback
    # Expected as an evaluation builds it: None when every expected cell is empty.
    assert sorted(repr(r["input"]["ref"]) for r in handler.requests) == ["None", "{'ref': '4'}"]
    two = judge.replace("def score(input, output, expected=None):", "def score(input, output):")
    two = two.replace("'ref': expected", "'ref': 0")
    program = sources.program_source(two, "RUBRIC", columns, "graded")
    result = check(metric, program, "x", cases[:1], world.JudgeHandler())
    assert result.cases[0].status == "valid", result.to_dict()


@pytest.mark.parametrize(
    "classes", [["fail", "pass"], ["bad", "ok", "good"], ["1", "2", "3", "4", "5"]]
)
@pytest.mark.parametrize("threshold", [0.5, 0.7])
def test_the_verdict_is_the_evaluation_pages(classes, threshold):
    """The agreement metric reads a score as contract.agreement.metric_classes does."""
    columns = sources.Columns(
        inputs=("q",),
        output="a",
        expected=(),
        human={"label_column": "l", "note_column": "", "classes": classes, "threshold": threshold},
    )
    loaded = namespace(sources.agreement_source(columns))
    rng = random.Random(0)
    scores = [i / 20 for i in range(-2, 23)] + [rng.uniform(-0.5, 1.5) for _ in range(200)]
    scores += [1 / 3, 2 / 3, 0.3, 0.7, 0.4, 0.6, 0.8]
    ours = [loaded["_verdict"](s) for s in scores]
    assert ours == agreement.metric_classes(scores, classes, threshold=threshold)
    # And it scores 1 exactly where the verdict is the person's label.
    for score_value, verdict in zip(scores[:30], ours[:30], strict=True):
        for label in classes:
            value, side = loaded["score"](
                {}, {"score": score_value, "feedback": ""}, {"l": label.upper()}
            )
            assert value == (1.0 if label == verdict else 0.0), (score_value, label)


def test_a_judge_that_gave_no_number_scores_zero_saying_so():
    loaded = namespace(sources.agreement_source(LABELS))
    value, side = loaded["score"]({}, {"score": None, "feedback": "It broke."}, {"verdict": "pass"})
    assert value == 0.0
    assert (
        side["feedback"]
        == "The judge gave no number to compare: it returned {'score': None, 'feedback': 'It broke.'}. The judge's feedback: It broke."
    )
