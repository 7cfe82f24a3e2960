"""The worker's reading of a run child's "run_finished" frame: a program can write that
frame itself, so its output and its DSPy part are held to the limits the child keeps to
(skynet.values' output budget, skynet.dspy_part), field by field, whatever it sent."""

from __future__ import annotations

import json

import pytest

from contract import frames
from skynet import values
from skynet.dspy_part import (
    DESC_LIMIT,
    FIELD_LIMIT,
    NAME_LIMIT,
    PART_LIMIT,
    PREDICTOR_LIMIT,
    TEXT_LIMIT,
    TRACE_LIMIT,
    fit,
)
from skynet.wire import ProtocolError

LONG = "x" * (TEXT_LIMIT + 5_000)
STEP = {"predictor": "self", "inputs": {"country": "Peru"}, "outputs": {"capital": "Lima"}}
FIELD = {"name": "country", "desc": "A country.", "prefix": "Country:"}
PREDICTOR = {"name": "self", "instructions": "Name the capital.", "inputs": [FIELD]}
PREDICTOR["outputs"] = [{**FIELD, "name": "capital"}]


def finished(part: object = None, output: dict | None = None) -> dict:
    frame = {
        "type": "run_finished",
        "outcome": "returned",
        "output": output or {"t": "str", "v": "Lima"},
        "output_repr": "'Lima'",
    }
    if part is not None:
        frame["dspy"] = part
    return frame


def kept(part: object) -> dict:
    return frames.check_run_finished(finished(part))["dspy"]


def charged(part: dict) -> int:
    """Characters of a run's part that count against PART_LIMIT: every name and text."""
    pairs = [*part["fields"].items()]
    for step in part["trace"]:
        pairs += [("", step["predictor"]), *step["inputs"].items(), *step["outputs"].items()]
    return sum(len(name) + len(text) for name, text in pairs)


def test_a_part_within_the_limits_is_kept_as_it_is_but_for_keys_a_child_never_sends():
    run = {"names": ["self", "b.predict"], "fields": {"capital": "Lima"}, "trace": [STEP, STEP]}
    assert kept({**run, "extra": LONG}) == run
    assert kept({"predictors": [PREDICTOR], "extra": LONG}) == {"predictors": [PREDICTOR]}


@pytest.mark.parametrize(
    ("part", "read", "limit"),
    [
        pytest.param(
            {"fields": {"capital": LONG}}, lambda p: p["fields"]["capital"], TEXT_LIMIT, id="field"
        ),
        pytest.param(
            {"fields": {LONG: "Lima"}},
            lambda p: next(iter(p["fields"])),
            NAME_LIMIT,
            id="field-name",
        ),
        pytest.param(
            {"trace": [{**STEP, "predictor": LONG}]},
            lambda p: p["trace"][0]["predictor"],
            NAME_LIMIT,
            id="step-predictor",
        ),
        pytest.param(
            {"trace": [{**STEP, "inputs": {"country": LONG}}]},
            lambda p: p["trace"][0]["inputs"]["country"],
            TEXT_LIMIT,
            id="step-input",
        ),
        pytest.param(
            {"trace": [{**STEP, "outputs": {LONG: "Lima"}}]},
            lambda p: next(iter(p["trace"][0]["outputs"])),
            NAME_LIMIT,
            id="step-output-name",
        ),
        pytest.param(
            {"trace": [{**STEP, "outputs": {"capital": LONG}}]},
            lambda p: p["trace"][0]["outputs"]["capital"],
            TEXT_LIMIT,
            id="step-output",
        ),
        pytest.param(
            {"predictors": [{**PREDICTOR, "name": LONG}]},
            lambda p: p["predictors"][0]["name"],
            NAME_LIMIT,
            id="predictor-name",
        ),
        pytest.param({"names": [LONG]}, lambda p: p["names"][0], NAME_LIMIT, id="name"),
        pytest.param(
            {"predictors": [{**PREDICTOR, "instructions": LONG}]},
            lambda p: p["predictors"][0]["instructions"],
            TEXT_LIMIT,
            id="instructions",
        ),
        pytest.param(
            {"predictors": [{**PREDICTOR, "inputs": [{**FIELD, "name": LONG}]}]},
            lambda p: p["predictors"][0]["inputs"][0]["name"],
            NAME_LIMIT,
            id="predictor-field-name",
        ),
        pytest.param(
            {"predictors": [{**PREDICTOR, "outputs": [{**FIELD, "desc": LONG}]}]},
            lambda p: p["predictors"][0]["outputs"][0]["desc"],
            DESC_LIMIT,
            id="predictor-field-desc",
        ),
        pytest.param(
            {"predictors": [{**PREDICTOR, "inputs": [{**FIELD, "prefix": LONG}]}]},
            lambda p: p["predictors"][0]["inputs"][0]["prefix"],
            NAME_LIMIT,
            id="predictor-field-prefix",
        ),
    ],
)
def test_each_text_is_cut_to_its_limit(part, read, limit):
    assert read(kept(part)) == "x" * limit


MANY = {f"f{i}": "v" for i in range(FIELD_LIMIT + 20)}


@pytest.mark.parametrize(
    ("part", "read", "limit"),
    [
        pytest.param({"fields": MANY}, lambda p: p["fields"], FIELD_LIMIT, id="fields"),
        pytest.param(
            {"trace": [STEP] * (TRACE_LIMIT + 20)}, lambda p: p["trace"], TRACE_LIMIT, id="steps"
        ),
        pytest.param(
            {"trace": [{**STEP, "inputs": MANY}]},
            lambda p: p["trace"][0]["inputs"],
            FIELD_LIMIT,
            id="step-inputs",
        ),
        pytest.param(
            {"trace": [{**STEP, "outputs": MANY}]},
            lambda p: p["trace"][0]["outputs"],
            FIELD_LIMIT,
            id="step-outputs",
        ),
        pytest.param(
            {"names": ["self"] * (PREDICTOR_LIMIT + 20)},
            lambda p: p["names"],
            PREDICTOR_LIMIT,
            id="names",
        ),
        pytest.param(
            {"predictors": [PREDICTOR] * (PREDICTOR_LIMIT + 20)},
            lambda p: p["predictors"],
            PREDICTOR_LIMIT,
            id="predictors",
        ),
        pytest.param(
            {"predictors": [{**PREDICTOR, "inputs": [FIELD] * (FIELD_LIMIT + 20)}]},
            lambda p: p["predictors"][0]["inputs"],
            FIELD_LIMIT,
            id="predictor-inputs",
        ),
    ],
)
def test_each_list_is_cut_to_its_first_items(part, read, limit):
    assert len(read(kept(part))) == limit


def test_a_12_mb_trace_is_kept_to_the_part_limit_in_order():
    big = "x" * 1_000_000
    step = {"predictor": "self", "inputs": {"question": big}, "outputs": {"answer": big}}
    part = kept({"fields": {"answer": "Lima"}, "trace": [step] * 6})
    assert part["fields"] == {"answer": "Lima"}
    assert charged(part) == PART_LIMIT
    # Four steps whole (each text at its limit), the fifth cut to what was left, no sixth.
    assert [len(step["inputs"]["question"]) for step in part["trace"]] == [TEXT_LIMIT] * 5
    assert [len(step["outputs"]["answer"]) for step in part["trace"]][:4] == [TEXT_LIMIT] * 4
    assert len(part["trace"][4]["outputs"]["answer"]) < TEXT_LIMIT
    assert len(json.dumps(part)) < PART_LIMIT + 1_000


def test_the_worker_cuts_as_the_child_does_so_a_cut_part_comes_through_unchanged():
    big = "y" * 300_000
    part = {
        "fields": {"answer": big, **MANY},
        "trace": [{"predictor": big, "inputs": MANY, "outputs": {big: big}}] * 80,
        "predictors": [{**PREDICTOR, "instructions": big}] * 3,
    }
    # fit() is what the child sends (skynet._artifact): the worker keeps the same, and
    # what it kept comes through again unchanged.
    sent = fit(part)
    assert kept(part) == sent
    assert kept(sent) == sent


@pytest.mark.parametrize(
    "part",
    [
        pytest.param({"fields": ["Lima"]}, id="fields-not-a-dict"),
        pytest.param({"fields": {"capital": 3}}, id="field-not-text"),
        pytest.param({"trace": {"0": STEP}}, id="trace-not-a-list"),
        pytest.param({"trace": ["self"]}, id="step-not-a-dict"),
        pytest.param({"trace": [{**STEP, "predictor": None}]}, id="step-without-predictor"),
        pytest.param({"trace": [{"predictor": "self", "outputs": {}}]}, id="step-without-inputs"),
        pytest.param({"trace": [{**STEP, "outputs": {"capital": ["Lima"]}}]}, id="output-not-text"),
        pytest.param({"predictors": {"self": PREDICTOR}}, id="predictors-not-a-list"),
        pytest.param({"names": "self"}, id="names-not-a-list"),
        pytest.param({"names": ["self", 3]}, id="name-not-text"),
        pytest.param({"predictors": [{**PREDICTOR, "instructions": None}]}, id="no-instructions"),
        pytest.param({"predictors": [{**PREDICTOR, "inputs": "country"}]}, id="inputs-not-a-list"),
        pytest.param({"predictors": [{**PREDICTOR, "inputs": ["country"]}]}, id="field-not-a-dict"),
        pytest.param(
            {"predictors": [{**PREDICTOR, "outputs": [{"name": 1}]}]}, id="field-name-not-text"
        ),
    ],
)
def test_a_part_of_another_shape_is_a_protocol_error(part):
    with pytest.raises(ProtocolError):
        frames.check_run_finished(finished(part))


def nested(levels: int) -> object:
    value: object = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("within", "past"),
    [
        pytest.param(list(range(99_999)), list(range(100_000)), id="nodes"),
        pytest.param(nested(24), nested(25), id="depth"),
    ],
)
def test_an_output_past_the_childs_budget_is_output_too_large(within, past):
    budget = values.output_budget()
    node = values.encode(within, budget)
    assert not budget.exhausted
    assert frames.check_run_finished(finished(output=node))["output"] == node
    # The child refuses to send `past`; a program that writes the frame itself is told
    # what the child would have said.
    budget = values.output_budget()
    values.encode(past, budget)
    assert budget.exhausted
    forged = values.encode(past, values.Budget(nodes=10**6, chars=10**6, depth=100, items=10**6))
    got = frames.check_run_finished(finished(output=forged))
    assert (got["outcome"], got["problem"], got["params"]) == (
        "raised",
        "output_too_large",
        {"type": "list"},
    )
    assert "output" not in got


@pytest.mark.parametrize(
    "output",
    [
        pytest.param({"t": "list", "items": [["not a node"]]}, id="item-not-a-node"),
        pytest.param({"t": "int", "v": [1, 2]}, id="value-not-a-datum"),
        pytest.param({"t": "list", "items": 3}, id="items-not-a-list"),
        pytest.param({"t": "object", "attrs": ["a"]}, id="attrs-not-a-dict"),
        pytest.param({"t": "dict", "items": [[{"t": "none"}]]}, id="dict-item-not-a-pair"),
        pytest.param({"v": "Lima"}, id="no-kind"),
    ],
)
def test_an_output_that_is_no_value_tree_is_a_protocol_error(output):
    with pytest.raises(ProtocolError):
        frames.check_run_finished(finished(output=output))
