"""Published DSPy GEPA and gepa metrics (tests/public_metrics: their sources and licences
are in each file's header) brought to the workbench as they are: each, as published, is
told what it looks like and how to fix it; each, converted, passes the contract check in
the worker's sandbox and scores a small dataset exactly as the original does in plain
Python."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

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

# Converted, each passes the check and scores its dataset as the original does. Where a
# file holds several metrics, the reader picks one (`metric=`, the Convert page's choice).
CONVERTED = [
    "gepa_aime_metric_with_feedback",
    "gepa_aime_metric",
    "facility_support_metric_with_feedback",
    "facility_support_metric",
    "trusted_monitor_metric",
    "dspy_validate_answer",
    "dspy_answer_exact_match",
    "multihop_top5_recall",
    "gepa_contains_answer",
    "gepa_aime_math_metric",
    "gepa_langchain_gsm8k",
    "langchain_big_number_arithmetic",
    "gepa_artifact_aime_metric_with_feedback",
    "gepa_artifact_hover_retrieval",
    "skill_fleet_gepa_semantic_match_metric",
    "tos_fairness_metric",
    "tos_fairness_metric_recall",
]
# Converted and scored as the original with a model answering its DSPy judges: the
# judges need the loopback provider, so the proof is in that test file.
PROVEN_WITH_A_MODEL = {"papillon_metric_with_feedback": "tests/providers/test_metric_dspy_judge.py"}
# Not brought over whole, each with why (the closing note counts them).
MISSES = {
    "gepa_anymaths_adapter": "an adapter: it scores inside evaluate(), not in a metric",
    "dspy_issue_8846_sql_judge": "asks a model through a judge class the thread never shows",
    "langchain_pair_sum_product": "a notebook cell that calls a helper from another cell",
    "dspy_helm_gsm8k": "a static method of a class that scores through dspy's own metric",
    "dspy_helm_mmlu_pro": "a static method of a class that scores through dspy's own metric",
    "dspy_helm_medec": "a static method of a class that scores through dspy's own metric",
    "realworld_invoice_metric": "feedback per predictor built by separate if statements",
    "realworld_qa_task_metric": "feedback per predictor built by separate if statements",
    "skill_fleet_gepa_composite_metric": "scores through two other DSPy metrics of its file",
}

# The dataset's output column when the program returns several fields and the metric
# reads one: the workbench's output is that column's value (README, DSPy programs).
OUTPUT_COLUMN = {
    "multihop_top5_recall": "titles",
    "gepa_artifact_hover_retrieval": "retrieved_docs",
}

ENTRIES = {entry.name: entry for entry in METRICS}


def _source(entry) -> str:
    return entry.file.read_text()


def _workbench_case(entry, case: dict) -> Case:
    output = case["output"]
    if entry.name in OUTPUT_COLUMN:
        output = output[OUTPUT_COLUMN[entry.name]]
    return Case(input=dict(case["input"]), output=output, expected=dict(case["expected"]))


def _original(entry, case: dict) -> tuple[float, str, dict]:
    """The original called as its framework calls it: DSPy's scoring call (trace and
    pred_name None), then, for a metric that answers per predictor, DSPy GEPA's
    reflection call for each of the program's predictors (pred_name); the data as gepa's
    default adapter gives it. The per-predictor texts, and a feedback that joins them
    labelled, are what the converted metric must give."""
    import dspy

    fn = load_original(entry)
    output = case["output"]
    per_predictor: dict[str, str] = {}
    if entry.call_style == "dspy":
        gold = dspy.Example(**{**case["input"], **case["expected"]}).with_inputs(
            *entry.input_columns
        )
        fields = output if isinstance(output, dict) else {entry.output_field: output}
        pred = dspy.Prediction(**fields)
        score, feedback = normalise(fn(gold, pred))
        if entry.pred_names and _routes_per_predictor(entry):
            for name in entry.pred_names:
                per_predictor[name] = normalise(fn(gold, pred, None, name, None))[1]
            feedback = "\n\n".join(f"{name}: {text}" for name, text in per_predictor.items())
    elif entry.call_style == "langchain_eval":
        state = {"messages": [SimpleNamespace(type="ai", content=output)]}
        score, feedback = normalise(fn(gepa_data(case), state))
    else:
        # load_original made the evaluator instance that gepa calls.
        score, feedback = normalise(fn(gepa_data(case), output))
    # A bare score has no feedback; its conversion returns an empty one.
    return float(score), feedback or "", per_predictor


def _sets_sorted(text: str) -> str:
    """The text with each printed set's items sorted: a metric that prints a set (HoVer's
    feedback does) prints it in an order that changes from one process to the next."""
    return re.sub(
        r"\{('[^{}]*')\}",
        lambda found: "{" + ", ".join(sorted(found.group(1).split(", "))) + "}",
        text,
    )


def _routes_per_predictor(entry) -> bool:
    """Whether the metric's feedback depends on pred_name (a `pred_name == "..."` chain)."""
    return "pred_name ==" in _source(entry)


def gepa_data(case: dict) -> dict:
    """gepa's DefaultDataInst as gepa's default adapter would be given the case's dataset
    row: "input" the input column, "answer" the expected answer column, and
    "additional_context" the other expected columns as text (a JSON-object column of
    that name is that dict); every column under its own name too."""
    inputs, expected = case["input"], dict(case["expected"])
    answer_column = "answer" if "answer" in expected else next(iter(expected))
    context = {k: str(v) for k, v in (expected.get("additional_context") or {}).items()}
    context |= {
        k: str(v) for k, v in expected.items() if k not in (answer_column, "additional_context")
    }
    if "input" in inputs:
        text = inputs["input"]
    elif len(inputs) == 1:
        (text,) = inputs.values()
    else:
        text = "\n".join(f"{k}: {v}" for k, v in inputs.items())
    return {
        **inputs,
        **expected,
        "input": text,
        "answer": expected[answer_column],
        "additional_context": context,
    }


# What each published file is, as the check says it (contract.looks_like).
KINDS = {
    "dspy": "dspy_metric",
    "gepa_evaluator": "gepa_evaluator",
    "langchain_eval": "gepa_evaluator",
}
WORDS = {
    "dspy_metric": "This file is a metric written for DSPy.",
    "gepa_evaluator": "This file is an evaluator written for gepa.",
    "gepa_adapter": "This file is a gepa adapter",
}


def _kind(entry) -> str:
    if entry.call_style == "gepa_adapter":
        return "gepa_adapter"
    if entry.call_style == "dspy" and entry.framework == "gepa":
        return "dspy_metric"  # gepa's AIME example is a DSPy metric
    return KINDS[entry.call_style]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_as_published_the_check_says_what_it_is_and_offers_convert_where_it_converts(name):
    entry = ENTRIES[name]
    cases = [_workbench_case(entry, case) for case in entry.cases[:3]]
    result = run_check(
        _source(entry), cases, timeout_s=20, sandbox_config=sandbox_pool.base_config()
    ).to_dict()
    assert result["passed"] is False
    with override("en"):
        shown = render(result)
    assert result["looks_like"]["kind"] == _kind(entry), result["looks_like"]
    assert shown["looks_like_message"].startswith(WORDS[_kind(entry)])
    # Convert is offered exactly where it changes the file.
    convertible = result["looks_like"]["convertible"]
    assert convertible == convert(_source(entry)).changed
    assert ("Convert to the contract" in shown["looks_like_message"]) is convertible


def _conversion(entry):
    # The file's metric, picked where it holds several (the Convert page asks which).
    first = convert(_source(entry))
    if any(note.code == "several_metric_functions" for note in first.notes):
        return convert(_source(entry), metric=entry.function)
    return first


@pytest.mark.parametrize("name", CONVERTED)
def test_converted_it_passes_the_check_and_scores_as_the_original(name):
    entry = ENTRIES[name]
    conversion = _conversion(entry)
    assert conversion.changed and conversion.framework in ("dspy", "gepa")
    assert not [n for n in conversion.notes if n.code == "names_not_defined"]
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
    got = {item.index: item.row for item in scored}
    for index, case in enumerate(entry.cases):
        want_score, want_feedback, want_per_predictor = _original(entry, case)
        row = got[index]
        assert math.isclose(row.score, want_score, rel_tol=0, abs_tol=1e-12), (index, row.score)
        assert _sets_sorted(row.feedback) == _sets_sorted(want_feedback), index
        assert row.predictor_feedback == want_per_predictor, index
    assert len({row.score for row in got.values()}) > 1  # the data reach both branches


@pytest.mark.parametrize("name", sorted(MISSES))
def test_a_miss_is_still_a_miss(name):
    """Each miss fails as its reason says; one that starts working must move to
    CONVERTED (and the count in the closing note goes up)."""
    entry = ENTRIES[name]
    conversion = _conversion(entry)
    left = {note.code for note in conversion.notes}
    lost = entry.pred_names and not _predictor_feedback_kept(conversion)
    assert (
        not conversion.changed
        or left & {"names_not_defined", "dspy_still_used", "example_passed_on", "old_name_called"}
        or lost
        or entry.needs_model
    ), (name, left)


def _predictor_feedback_kept(conversion) -> bool:
    return '"predictor_feedback"' in conversion.source


def test_every_published_metric_is_accounted_for():
    assert set(CONVERTED) | set(MISSES) | set(PROVEN_WITH_A_MODEL) == set(ENTRIES)
    assert not set(CONVERTED) & set(MISSES)
