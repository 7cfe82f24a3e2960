"""Published DSPy GEPA and gepa metrics (tests/public_metrics: their sources and licences
are in each file's header) brought to the workbench as they are: each, as published, is
told what it looks like and how to fix it; each, converted, passes the contract check in
the worker's sandbox and scores a small dataset exactly as the original does in plain
Python."""

from __future__ import annotations

import math

import pytest
from django.utils.translation import override

from contract.cases import Case
from contract.convert import convert
from contract.engine import run_check
from contract.evaluation import evaluate
from contract.runner import OnDemand
from jobs import sandbox_pool
from tests.public_metrics import METRICS, load_original, normalise
from wording import render

# Each metric is converted whole; those left out are said with why.
CONVERTED = [
    "gepa_aime_metric_with_feedback",
    "gepa_aime_metric",
    "facility_support_metric_with_feedback",
    "facility_support_metric",
    "trusted_monitor_metric",
    "dspy_validate_answer",
    "multihop_top5_recall",
    "gepa_contains_answer",
    "gepa_aime_math_metric",
]
# Left as published by the conversion, each with a note saying why: dspy's metrics module
# holds two metrics (which one is meant is not guessed); the AnyMaths adapter and the
# LangChain example score inside an adapter, not in a metric function; PAPILLON's metric
# asks a model through dspy modules of its own (converted, with notes for the hand work).
NOT_CONVERTED = {
    "dspy_answer_exact_match": "several_metric_functions",
    "gepa_anymaths_adapter": "no_metric_function",
    "gepa_langchain_gsm8k": "no_metric_function",
}
# The dataset's output column when the program returns several fields and the metric
# reads one: the workbench's output is that column's value (README, DSPy programs).
OUTPUT_COLUMN = {"multihop_top5_recall": "titles"}

ENTRIES = {entry.name: entry for entry in METRICS}


def _source(entry) -> str:
    return entry.file.read_text()


def _workbench_case(entry, case: dict) -> Case:
    output = case["output"]
    if entry.name in OUTPUT_COLUMN:
        output = output[OUTPUT_COLUMN[entry.name]]
    return Case(input=dict(case["input"]), output=output, expected=dict(case["expected"]))


def _original(entry, case: dict) -> tuple[float, str]:
    """The original called as the workbench's contract calls a metric: trace and pred_name
    None (DSPy's first, scoring call), the data as gepa's evaluator gets it."""
    import dspy

    fn = load_original(entry)
    output = case["output"]
    if entry.call_style == "dspy":
        gold = dspy.Example(**{**case["input"], **case["expected"]}).with_inputs(
            *entry.input_columns
        )
        fields = output if isinstance(output, dict) else {entry.output_field: output}
        score, feedback = normalise(fn(gold, dspy.Prediction(**fields)))
    else:
        # load_original made the evaluator instance that gepa calls.
        score, feedback = normalise(fn({**case["input"], **case["expected"]}, output))
    # A bare score has no feedback; its conversion returns an empty one.
    return float(score), feedback or ""


@pytest.mark.parametrize("name", sorted(set(CONVERTED) | set(NOT_CONVERTED)))
def test_as_published_the_check_says_what_it_looks_like_and_how_to_fix_it(name):
    entry = ENTRIES[name]
    cases = [_workbench_case(entry, case) for case in entry.cases[:3]]
    result = run_check(
        _source(entry), cases, timeout_s=20, sandbox_config=sandbox_pool.base_config()
    ).to_dict()
    assert result["passed"] is False
    with override("en"):
        shown = render(result)
    failed = next(s for s in shown["stages"] if s["id"] == shown["failed_stage"])
    if name in NOT_CONVERTED and NOT_CONVERTED[name] == "no_metric_function":
        # An adapter, not a metric: the check says what is missing (the AnyMaths adapter
        # first meets its import of litellm, which a metric may not import).
        assert failed["problem"] in ("no_score_function", "module_not_available")
        return
    # The framework its signature is written for (gepa's AIME example is a DSPy metric).
    written_for = convert(_source(entry)).framework or entry.framework
    framework = "gepa evaluator" if written_for == "gepa" else "DSPy metric"
    assert framework in failed["message"], failed["message"]
    assert "Convert to the contract" in failed["message"]


@pytest.mark.parametrize("name", CONVERTED)
def test_converted_it_passes_the_check_and_scores_as_the_original(name):
    entry = ENTRIES[name]
    conversion = convert(_source(entry))
    assert conversion.changed and conversion.framework in ("dspy", "gepa")
    cases = [_workbench_case(entry, case) for case in entry.cases]
    config = sandbox_pool.base_config()

    checked = run_check(conversion.source, cases[:3], timeout_s=20, sandbox_config=config)
    assert checked.passed is True, [(c.status, c.problem, c.params) for c in checked.cases]

    scored = []
    ended = evaluate(
        conversion.source,
        cases,
        on_scored=scored.append,
        sandboxes=OnDemand(config),
        timeout_s=20,
    )
    assert ended.stopped is None, ended
    got = {item.index: (item.row.score, item.row.feedback) for item in scored}
    for index, case in enumerate(entry.cases):
        want_score, want_feedback = _original(entry, case)
        score, feedback = got[index]
        assert math.isclose(score, want_score, rel_tol=0, abs_tol=1e-12), (index, score)
        assert feedback == want_feedback, index
    assert len({score for score, _ in got.values()}) > 1  # the data reach both branches


@pytest.mark.parametrize(("name", "code"), sorted(NOT_CONVERTED.items()))
def test_what_the_conversion_leaves_alone_it_says(name, code):
    conversion = convert(_source(ENTRIES[name]))
    assert not conversion.changed
    assert [note.code for note in conversion.notes] == [code]
