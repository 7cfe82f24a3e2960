"""Values as data: the worker's verdict on a child's description of a value is the verdict
the contract gives on the value itself, and a run's output reaches the metric intact."""

from __future__ import annotations

import fractions
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from contract import values as judged
from skynet import values
from skynet.returns import check_return


class Label(str):
    pass


class Score(float):
    pass


class Odd(tuple):
    def __repr__(self):
        raise SystemExit


class Hostile:
    def __float__(self):
        raise RuntimeError("no")

    def __repr__(self):
        return "<hostile>"


def _verdict(value: object):
    return check_return(value)


def _through_the_wire(value: object):
    return judged.decode(values.encode(value, values.return_budget()))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.builds(Label, st.text(max_size=5)),
    st.builds(Score, st.floats()),
    st.builds(fractions.Fraction, st.integers(), st.integers(min_value=1)),
    st.just(Hostile()),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=4),
    ),
    max_leaves=12,
)
side_infos = st.fixed_dictionaries(
    {"feedback": st.one_of(st.text(max_size=30), scalars)},
    optional={
        "scores": st.dictionaries(st.text(max_size=5), scalars, max_size=4) | trees,
        "predictor_feedback": st.dictionaries(
            st.one_of(st.text(max_size=8), st.builds(Label, st.text(max_size=5)), st.integers()),
            st.one_of(st.text(max_size=12), scalars),
            max_size=4,
        )
        | trees,
    },
)
returns = st.one_of(
    trees,
    st.tuples(scalars, side_infos | trees),
    st.lists(st.one_of(scalars, side_infos), min_size=2, max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(returns)
def test_the_workers_verdict_is_the_contracts_verdict_on_the_real_value(value):
    real, described = _verdict(value), _verdict(_through_the_wire(value))
    assert described.problem == real.problem
    assert described.params == real.params
    assert described.bool_score == real.bool_score
    assert described.feedback == real.feedback
    assert described.scores == real.scores
    assert described.predictor_feedback == real.predictor_feedback
    if real.score is None:
        assert described.score is None
    else:
        assert described.score == real.score or (
            math.isnan(real.score) and math.isnan(described.score)
        )


def test_a_hostile_repr_and_subclasses_keep_their_names():
    report = judged.return_report(
        values.encode(Odd((1.0, {"feedback": "Matches."})), values.return_budget()), "<metric.Odd>"
    )
    assert report["problem"] is None and report["repr"] == "<metric.Odd>"
    report = judged.return_report(
        values.encode((Hostile(), {"feedback": "x"}), values.return_budget()), "(...)"
    )
    assert (report["problem"], report["params"]["type"]) == (
        "score_not_number",
        f"{__name__}.Hostile",
    )
    assert report["params"]["fix"] == 'return 0.0, {"feedback": "x"}'


def test_long_feedback_is_cut_by_the_worker_and_its_length_kept():
    node = values.encode((1.0, {"feedback": "x" * 200_000}), values.return_budget())
    report = judged.return_report(node, "")
    assert len(report["feedback"]) == 65536 and report["feedback_length"] == 200_000


def test_each_predictors_feedback_is_reported_capped():
    from skynet.report import FEEDBACK_LIMIT, MAX_PREDICTOR_FEEDBACK

    texts = {f"step{i}.predict": f"Step {i}: name the date." for i in range(60)}
    texts["step0.predict"] = "y" * 70_000
    node = values.encode(
        (1.0, {"feedback": "x", "predictor_feedback": texts}), values.return_budget()
    )
    report = judged.return_report(node, "")
    assert report["problem"] is None
    kept = report["predictor_feedback"]
    assert list(kept) == [f"step{i}.predict" for i in range(MAX_PREDICTOR_FEEDBACK)]
    assert kept["step1.predict"] == "Step 1: name the date."
    assert kept["step0.predict"] == "y" * FEEDBACK_LIMIT
    assert report["predictor_feedback_omitted"] == 60 - MAX_PREDICTOR_FEEDBACK


def test_an_invalid_predictor_feedback_gets_a_fix_that_keeps_its_good_entries():
    side_info = {"feedback": "Close.", "predictor_feedback": {"first": "Quote it.", "second": " "}}
    node = values.encode((0.5, side_info), values.return_budget())
    report = judged.return_report(node, "")
    assert (report["problem"], report["params"]["name"]) == ("predictor_feedback_empty", "second")
    assert report["predictor_feedback"] == {} and report["predictor_feedback_omitted"] == 0
    fix = report["params"]["fix"]
    assert fix == 'return 0.5, {"feedback": "Close.", "predictor_feedback": {"first": "Quote it."}}'
    assert check_return(eval(fix.removeprefix("return "))).valid


class Answer:
    def __init__(self, text, sources):
        self.text, self.sources = text, sources


def test_a_runs_output_reaches_the_metric_as_it_was():
    output = {
        "answer": Answer("billing", ["faq", 3]),
        "tags": {"a", "b"},
        "blob": b"\x00\x01",
        "big": 10**30,
        "pair": (1, 2.5),
        "nested": [[None, True, float("inf")]],
    }
    budget = values.output_budget()
    rebuilt = values.decode(values.encode(output, budget))
    assert not budget.exhausted
    assert rebuilt["tags"] == {"a", "b"} and rebuilt["blob"] == b"\x00\x01"
    assert rebuilt["big"] == 10**30 and rebuilt["pair"] == (1, 2.5)
    assert rebuilt["nested"] == [[None, True, math.inf]]
    answer = rebuilt["answer"]
    assert type(answer).__name__ == "Answer" and type(answer).__module__ == __name__
    assert (answer.text, answer.sources) == ("billing", ["faq", 3])
    assert repr(answer).startswith(f"<{__name__}.Answer object at")


def test_an_output_past_the_budget_is_refused_not_cut():
    budget = values.output_budget()
    values.encode("x" * 3_000_000, budget)
    assert budget.exhausted
    budget = values.output_budget()
    values.encode(list(range(200_000)), budget)
    assert budget.exhausted
