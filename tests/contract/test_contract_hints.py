"""contract.hints: feedback-quality advice on valid cases."""

from __future__ import annotations

import pytest

from contract.hints import (
    ScoredCase,
    compute_hints,
    is_actionable,
    is_generic,
    low_scores,
    restates_score,
)


def hints(*cases, has_reward_spec=False):
    scored = [
        ScoredCase(i, score, fb, isinstance(score, bool)) for i, (score, fb) in enumerate(cases)
    ]
    return [(h.code, h.case) for h in compute_hints(scored, has_reward_spec=has_reward_spec)]


GOOD = "Expected 'billing', got 'other'. The message mentions a charge."


# -- is_actionable: the heuristic on its own -------------------------------------


@pytest.mark.parametrize("text", ["Incorrect.", "Wrong format.", "Bad", "Try again.", "Score: 0"])
def test_poor_feedback_is_not_actionable(text):
    assert not is_actionable(text)


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        "The output is not valid JSON. It has a trailing comma after the last field.",
        "Close. Missing the date.",
        "The label should be billing.",
        "Off by 3 days.",
        'The answer is "bug".',
        "Wrong: the date and the amount are swapped",
        "Se esperaba billing, no other.",
        "उत्तर में तारीख गायब है।",
    ],
)
def test_useful_feedback_is_actionable(text):
    assert is_actionable(text)


def test_apostrophe_is_not_a_quote_and_generic_colon_detail_is_not_detail():
    assert not is_actionable("It doesn't work.")
    assert not is_actionable("Result: wrong answer")


@pytest.mark.parametrize(
    "text",
    [
        "Correct.",
        "Wrong.",
        "Incorrect.",
        "Wrong format.",
        "OK",
        "Good",
        "bad!",
        "ERROR",
        "Fail",
        "Pass",
        "Incorrecto.",
        "Correcto.",
        "गलत",
        "सही है।",
    ],
)
def test_generic_words(text):
    assert is_generic(text)


@pytest.mark.parametrize("text", [GOOD, "Correct: billing", "Wrong date."])
def test_not_generic(text):
    assert not is_generic(text)


@pytest.mark.parametrize("text", ["Score: 0.5", "0/1", "50%", "0.8", "You got 3 out of 5 points."])
def test_restates_score(text):
    assert restates_score(text)


@pytest.mark.parametrize("text", ["Off by 3 days.", "Score it again", ""])
def test_does_not_restate_score(text):
    assert not restates_score(text)


def test_low_scores_below_half_in_unit_range_else_below_the_top():
    unit = [ScoredCase(0, 0.4, ""), ScoredCase(1, 0.5, ""), ScoredCase(2, 1.0, "")]
    assert low_scores(unit) == {0}
    wide = [ScoredCase(0, 3, ""), ScoredCase(1, 10, ""), ScoredCase(2, 10, "")]
    assert low_scores(wide) == {0}


# -- each hint ---------------------------------------------------------------------


def test_good_feedback_gets_no_hints():
    assert hints((1.0, "Matches the expected label 'billing'."), (0.0, GOOD)) == []


def test_feedback_empty_suppresses_the_other_feedback_hints():
    assert hints((0.0, "  ")) == [("feedback_empty", 0)]


def test_feedback_too_short():
    assert hints((1.0, "Fine date")) == [("feedback_too_short", 0)]


def test_feedback_generic_high_score_is_only_generic():
    assert hints((1.0, "Correct.")) == [("feedback_generic", 0)]


def test_feedback_generic_low_score_is_also_not_actionable():
    assert hints((0.0, "Incorrect.")) == [("feedback_generic", 0), ("feedback_not_actionable", 0)]
    assert hints((0.0, "Wrong format.")) == [
        ("feedback_generic", 0),
        ("feedback_not_actionable", 0),
    ]


def test_feedback_restates_score_suppresses_short_and_generic():
    assert hints((1.0, "1/1")) == [("feedback_restates_score", 0)]
    assert hints((0.0, "Score: 0")) == [
        ("feedback_restates_score", 0),
        ("feedback_not_actionable", 0),
    ]


def test_feedback_not_actionable_on_long_vague_text():
    text = "This answer is not what we were looking for at all, sorry."
    assert hints((1.0, "Matches the label 'billing'."), (0.1, text)) == [
        ("feedback_not_actionable", 1)
    ]


def test_feedback_same_for_different_scores():
    text = "The label is compared with the expected one."
    result = compute_hints(
        [ScoredCase(0, 1.0, text), ScoredCase(1, 0.8, text.upper()), ScoredCase(2, 1.0, GOOD)],
        has_reward_spec=False,
    )
    same = [h for h in result if h.code == "feedback_same_for_different_scores"]
    assert len(same) == 1
    assert same[0].case is None and same[0].params == {"cases": [0, 1], "scores": [1.0, 0.8]}


def test_same_feedback_with_same_score_is_fine():
    text = "The label is compared with the expected one."
    assert hints((1.0, text), (1.0, text)) == []


def test_score_out_of_range_only_without_reward_spec():
    text = "Matches the label 'billing'."
    assert hints((3.0, text)) == [("score_out_of_range", 0)]
    assert hints((3.0, text), has_reward_spec=True) == []


def test_bool_score():
    assert hints((True, "Matches the label 'billing'.")) == [("bool_score", 0)]
