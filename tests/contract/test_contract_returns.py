"""skynet.returns.check_return: the pure validator of score()'s return value."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skynet.returns import PROBLEMS, check_return

# The docs' table of return values: (value, problem or None).
DOCS_TABLE = [
    ((0.8, {"feedback": "Close. Missing the date."}), None),
    ([1.0, {"feedback": "OK", "scores": {"format": 1.0}}], None),
    (0.8, "not_a_pair"),
    ((0.8, "Close."), "side_info_not_dict"),
    ((0.8, {}), "feedback_missing"),
    (("0.8", {"feedback": "OK"}), "score_not_number"),
    ((0.8, {"feedback": "OK", "scores": {"a": "high"}}), "named_score_not_number"),
]


@pytest.mark.parametrize(("value", "problem"), DOCS_TABLE)
def test_docs_table_row(value, problem):
    assert check_return(value).problem == problem


@pytest.mark.parametrize(
    ("value", "problem", "params"),
    [
        ((1, 2, 3), "not_a_pair", {}),
        ([], "not_a_pair", {}),
        ({"score": 1}, "not_a_pair", {}),
        ("ab", "not_a_pair", {}),
        ((None, {"feedback": "x"}), "score_not_number", {"type": "NoneType"}),
        ((float("nan"), {"feedback": "x"}), "score_not_finite", {}),
        ((float("-inf"), {"feedback": "x"}), "score_not_finite", {}),
        ((10**400, {"feedback": "x"}), "score_not_finite", {}),
        ((0.5, ["feedback"]), "side_info_not_dict", {"type": "list"}),
        ((0.5, {"feedback": None}), "feedback_not_string", {"type": "NoneType"}),
        ((0.5, {"feedback": b"bytes"}), "feedback_not_string", {"type": "bytes"}),
        ((0.5, {"feedback": "x", "scores": [1]}), "scores_not_dict", {"type": "list"}),
        ((0.5, {"feedback": "x", "scores": None}), "scores_not_dict", {"type": "NoneType"}),
        ((0.5, {"feedback": "x", "scores": {"a": None}}), "named_score_not_number", {"name": "a"}),
        (
            (0.5, {"feedback": "x", "scores": {"ok": 1, "b": math.nan}}),
            "named_score_not_finite",
            {"name": "b"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": ["first"]}),
            "predictor_feedback_not_dict",
            {"type": "list"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": "Say the date."}),
            "predictor_feedback_not_dict",
            {"type": "str"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": None}),
            "predictor_feedback_not_dict",
            {"type": "NoneType"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {1: "Say the date."}}),
            "predictor_name_not_string",
            {"name": "1"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {("a", "b"): "Say the date."}}),
            "predictor_name_not_string",
            {"name": "('a', 'b')"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {"first": 3}}),
            "predictor_feedback_not_string",
            {"name": "first", "type": "int"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {"ok": "Fine.", "second": None}}),
            "predictor_feedback_not_string",
            {"name": "second", "type": "NoneType"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {"first": ""}}),
            "predictor_feedback_empty",
            {"name": "first"},
        ),
        (
            (0.5, {"feedback": "x", "predictor_feedback": {"ok": "Fine.", "b.predict": " \n\t"}}),
            "predictor_feedback_empty",
            {"name": "b.predict"},
        ),
    ],
)
def test_each_problem_code_with_params(value, problem, params):
    verdict = check_return(value)
    assert (verdict.problem, verdict.params) == (problem, params)


def test_problem_list_is_exactly_the_contract():
    assert set(PROBLEMS) == {
        "not_a_pair",
        "score_not_number",
        "score_not_finite",
        "side_info_not_dict",
        "feedback_missing",
        "feedback_not_string",
        "scores_not_dict",
        "named_score_not_number",
        "named_score_not_finite",
        "predictor_feedback_not_dict",
        "predictor_name_not_string",
        "predictor_feedback_not_string",
        "predictor_feedback_empty",
    }


def test_valid_value_is_summarised():
    verdict = check_return((Fraction(1, 4), {"feedback": "fine", "scores": {"a": 1, 2: 0.5}}))
    assert verdict.valid
    assert verdict.score == 0.25
    assert verdict.feedback == "fine"
    assert verdict.scores == {"a": 1.0, "2": 0.5}


def test_predictor_feedback_is_kept_on_the_verdict_in_order():
    per_predictor = {"second.predict": "Name the label only.", "first": "Quote the date."}
    verdict = check_return((0.5, {"feedback": "Close.", "predictor_feedback": per_predictor}))
    assert verdict.valid and verdict.feedback == "Close."
    assert verdict.predictor_feedback == per_predictor
    assert list(verdict.predictor_feedback) == ["second.predict", "first"]
    # Without the key, or with none in it, there is none; "feedback" stays required.
    assert check_return((0.5, {"feedback": "x"})).predictor_feedback == {}
    assert check_return((0.5, {"feedback": "x", "predictor_feedback": {}})).predictor_feedback == {}
    missing = check_return((0.5, {"predictor_feedback": {"first": "Quote the date."}}))
    assert missing.problem == "feedback_missing"


def test_a_named_score_problem_is_told_before_the_predictor_feedbacks():
    verdict = check_return(
        (0.5, {"feedback": "x", "scores": {"a": "high"}, "predictor_feedback": {"b": ""}})
    )
    assert (verdict.problem, verdict.params) == ("named_score_not_number", {"name": "a"})
    valid_scores = check_return(
        (0.5, {"feedback": "x", "scores": {"a": 1}, "predictor_feedback": {"b": ""}})
    )
    assert (valid_scores.problem, valid_scores.scores) == ("predictor_feedback_empty", {"a": 1.0})
    assert valid_scores.predictor_feedback == {}


def test_predictor_feedback_subclasses_are_read_through_base_methods():
    class Text(str):
        def __str__(self):
            raise RuntimeError

        def strip(self, *args):
            return ""  # str.strip is what counts, not this

        def __eq__(self, other):
            raise RuntimeError

        __hash__ = str.__hash__

    class Table(dict):
        def items(self):
            raise RuntimeError

        def get(self, *args):
            raise RuntimeError

    side_info = Table(feedback="x", predictor_feedback=Table({Text("first"): Text("Say why.")}))
    verdict = check_return((0.5, side_info))
    assert verdict.valid and verdict.predictor_feedback == {"first": "Say why."}
    assert all(type(k) is str and type(v) is str for k, v in verdict.predictor_feedback.items())


def test_bool_score_is_valid_and_flagged():
    verdict = check_return((True, {"feedback": "yes"}))
    assert verdict.valid and verdict.bool_score and verdict.score == 1.0


def test_subclasses_are_read_through_base_methods():
    class Sneaky(tuple):
        def __len__(self):
            raise RuntimeError

        def __getitem__(self, i):
            raise RuntimeError

    class Text(str):
        def __str__(self):
            raise RuntimeError

    verdict = check_return(Sneaky((0.5, {"feedback": Text("hello")})))
    assert verdict.valid and verdict.feedback == "hello" and type(verdict.feedback) is str


def test_hostile_objects_never_raise():
    class Hostile:
        def __getattribute__(self, name):
            raise RuntimeError(name)

        def __eq__(self, other):
            raise RuntimeError

        __hash__ = object.__hash__

    class BadReal(float):
        def __float__(self):
            raise SystemExit  # BaseException too: the child must still report

    assert check_return(Hostile()).problem == "not_a_pair"
    assert check_return((Hostile(), {})).problem == "score_not_number"
    assert check_return((0.5, Hostile())).problem == "side_info_not_dict"
    assert check_return((0.5, {"feedback": Hostile()})).problem == "feedback_not_string"
    assert check_return((BadReal(1.0), {"feedback": "x"})).problem == "score_not_number"
    hostile_texts = {"feedback": "x", "predictor_feedback": Hostile()}
    assert check_return((0.5, hostile_texts)).problem == "predictor_feedback_not_dict"
    hostile_name = check_return((0.5, {"feedback": "x", "predictor_feedback": {Hostile(): "t"}}))
    assert hostile_name.problem == "predictor_name_not_string"
    hostile_text = check_return((0.5, {"feedback": "x", "predictor_feedback": {"a": Hostile()}}))
    assert hostile_text.problem == "predictor_feedback_not_string"


# -- properties ---------------------------------------------------------------

finite_reals = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**1000), max_value=2**1000),
    st.fractions(max_denominator=10**6),
    st.booleans(),
)
json_like = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text() | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(score=finite_reals, feedback=st.text())
def test_any_finite_real_with_string_feedback_is_valid(score, feedback):
    verdict = check_return((score, {"feedback": feedback}))
    assert verdict.valid
    assert verdict.feedback == feedback
    assert math.isfinite(verdict.score)


@given(score=finite_reals, feedback=st.text(), names=st.dictionaries(st.text(), finite_reals))
def test_finite_named_scores_are_valid_in_a_list_too(score, feedback, names):
    verdict = check_return([score, {"feedback": feedback, "scores": names, "extra": object()}])
    assert verdict.valid
    assert len(verdict.scores) == len(names)


@given(
    feedback=st.text(),
    texts=st.dictionaries(st.text(), st.text().filter(lambda text: text.strip())),
)
def test_any_names_with_texts_beyond_whitespace_are_valid_predictor_feedback(feedback, texts):
    verdict = check_return((1.0, {"feedback": feedback, "predictor_feedback": texts}))
    assert verdict.valid and verdict.predictor_feedback == texts


@given(feedback=st.text(), texts=json_like)
def test_predictor_feedback_of_anything_never_raises(feedback, texts):
    verdict = check_return((1.0, {"feedback": feedback, "predictor_feedback": texts}))
    assert verdict.problem is None or verdict.problem in PROBLEMS
    if verdict.valid:
        assert all(type(v) is str and v.strip() for v in verdict.predictor_feedback.values())


@given(value=json_like)
def test_anything_not_a_pair_is_not_a_pair(value):
    if isinstance(value, list | tuple) and len(value) == 2:
        return
    assert check_return(value).problem == "not_a_pair"


@given(value=json_like)
def test_never_raises_and_always_returns_a_known_code(value):
    verdict = check_return(value)
    assert verdict.problem is None or verdict.problem in PROBLEMS
    assert verdict.score is None or math.isfinite(verdict.score)


@given(first=json_like, second=json_like)
def test_pairs_of_anything_never_raise(first, second):
    verdict = check_return((first, second))
    assert verdict.problem is None or verdict.problem in PROBLEMS
