"""contract.hints: feedback-quality advice on valid cases."""

from __future__ import annotations

import pytest

from contract.hints import (
    GENERIC_WORDS,
    PRINTED_HINT_BYTES,
    ScoredCase,
    compute_hints,
    faulty_scores,
    feedback_notes,
    is_actionable,
    is_generic,
    is_specific,
    low_scores,
    printed_hints,
    restates_score,
    shown,
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


def test_feedback_generic_on_a_perfect_score_gets_no_hint():
    # The exact-match starter says "Correct." on a match: nothing is wrong to name.
    assert hints((1.0, "Correct.")) == []
    assert hints((1.0, "Correct."), (1.0, "Correct."), (1.0, "OK")) == []


def test_feedback_generic_on_a_faulty_score_is_one_hint():
    assert hints((0.0, "Incorrect.")) == [("feedback_generic", 0)]
    assert hints((0.0, "Wrong format.")) == [("feedback_generic", 0)]
    # Not low, but the score still shows a fault.
    assert hints((0.8, "Wrong.")) == [("feedback_generic", 0)]


def test_feedback_generic_when_cases_that_scored_differently_say_the_same():
    result = hints((1.0, "Correct."), (0.0, "Correct."))
    assert result == [
        ("feedback_generic", 0),
        ("feedback_generic", 1),
        ("feedback_same_for_different_scores", None),
    ]


def test_the_example_fix_is_built_from_each_cases_own_values():
    cases = [
        ScoredCase(0, 1.0, "Correct.", expected_text="'billing'", output_text="'billing'"),
        ScoredCase(1, 0.0, "Wrong.", expected_text="'bug'", output_text="'other'"),
        ScoredCase(2, 0.0, "Wrong.", expected_text="'account'", output_text="'billing'"),
        ScoredCase(3, 0.0, "Wrong.", output_text="'other'"),
    ]
    params = {h.case: h.params for h in compute_hints(cases, has_reward_spec=False)}
    assert params[1] == {"example": "mismatch", "expected": "'bug'", "output": "'other'"}
    assert params[2] == {"example": "mismatch", "expected": "'account'", "output": "'billing'"}
    assert params[3] == {"example": "output", "output": "'other'"}
    assert 0 not in params


def test_shown_quotes_strings_and_reads_a_one_key_dict_as_its_value():
    assert shown({"label": "account"}) == "'account'"
    assert shown("other") == "'other'"
    assert shown({"a": 1, "b": [2]}) == '{"a": 1, "b": [2]}'
    assert len(shown("x" * 500)) == 60


def test_faulty_scores_below_the_top_of_the_scale():
    unit = [ScoredCase(0, 0.8, ""), ScoredCase(1, 1.0, "")]
    assert faulty_scores(unit) == {0}
    wide = [ScoredCase(0, 3, ""), ScoredCase(1, 10, "")]
    assert faulty_scores(wide) == {0}


def test_feedback_restates_score_suppresses_short_and_generic():
    assert hints((1.0, "1/1")) == [("feedback_restates_score", 0)]
    # One hint on a failing case: restating the score already says it lacks the why.
    assert hints((0.0, "Score: 0")) == [("feedback_restates_score", 0)]


def test_a_failing_case_gets_at_most_one_feedback_hint():
    for text in ("Incorrect.", "Score: 0", "Bad date", "It doesn't work, sorry about that."):
        codes = [code for code, _case in hints((0.0, text))]
        assert len(codes) == 1, (text, codes)


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


# -- the positive note ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        "Expected 'bug', got 'other'.",
        "Matches the expected label 'billing'.",
        "Close. Missing the date.",
        "Se esperaba billing, no other.",
    ],
)
def test_specific_feedback(text):
    assert is_specific(text)


@pytest.mark.parametrize(
    "text", ["Correct.", "Score: 0.5", "Bad date", "All good here.", "", "Off by 3"]
)
def test_not_specific_feedback(text):
    assert not is_specific(text)


def test_specific_feedback_gets_a_note_and_vague_feedback_none():
    cases = [
        ScoredCase(0, 1.0, "Correct."),
        ScoredCase(1, 0.0, "Expected 'bug', got 'other'."),
        ScoredCase(2, 1.0, "Matches the expected label 'account'."),
    ]
    notes = feedback_notes(cases)
    assert [(n.code, n.case) for n in notes] == [("feedback_specific", 1), ("feedback_specific", 2)]


def test_no_note_for_the_same_text_on_cases_that_scored_differently():
    text = "The label is compared with the expected one."
    assert feedback_notes([ScoredCase(0, 1.0, text), ScoredCase(1, 0.0, text)]) == []


# -- printing in score ----------------------------------------------------------------


def test_printed_output_hint_for_a_case_that_printed_a_lot_or_was_cut():
    found = printed_hints([(0, 40, 0), (1, PRINTED_HINT_BYTES + 1, 0), (2, 100, 7)])
    assert [(h.code, h.case, h.params) for h in found] == [
        ("printed_output", 1, {"printed": PRINTED_HINT_BYTES + 1, "cut": 0}),
        ("printed_output", 2, {"printed": 100, "cut": 7}),
    ]


# -- in a real check --------------------------------------------------------------------


def test_the_exact_match_starter_gets_one_note_and_no_generic_hint(check):
    from metrics.starters import EXACT_MATCH

    result = check(EXACT_MATCH)
    assert [(h.code, h.case) for h in result.hints] == [("feedback_specific", 1)]


def test_generic_feedback_on_failing_cases_names_each_cases_own_values(check):
    result = check(
        """
        def score(input, output, expected=None):
            return 0.0, {"feedback": "Wrong."}
        """
    )
    generic = [h for h in result.hints if h.code == "feedback_generic"]
    assert [(h.case, h.params["expected"], h.params["output"]) for h in generic] == [
        (0, "'billing'", "'billing'"),
        (1, "'bug'", "'other'"),
        (2, "'account'", "'account'"),
    ]
    # Output and expected agree on cases 0 and 2: "Expected X, got X" would say nothing.
    assert [h.params["example"] for h in generic] == ["match", "mismatch", "match"]


def _words_by_category(text: str) -> list[str]:
    """The words as the hints read them in any language: runs of characters of the
    categories L, M and N, after NFKC and casefold."""
    import unicodedata

    words, current = [], []
    for char in unicodedata.normalize("NFKC", text).casefold():
        if unicodedata.category(char)[0] in "LMN":
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


ASCII_TEXTS = [
    "".join(chr(code) for code in range(128)),
    "Expected 'bug', got 'other' (case 12): snake_case_name, Score: 0.5/1!",
    "Token F1 0.67 (precision 0.80, recall 0.57). Missing: invoice, card. Not expected: the.",
    "\tTabs\nand new-lines;ALL CAPS & digits 0123456789 x2y3_z",
    "",
]


@pytest.mark.parametrize("text", ASCII_TEXTS)
def test_ascii_feedback_splits_into_the_same_words_as_by_unicode_categories(text):
    from contract.hints import tokens

    assert tokens(text) == _words_by_category(text)
    assert is_generic(text) == (
        bool(_words_by_category(text))
        and all(word in GENERIC_WORDS for word in _words_by_category(text))
    )


def test_ascii_feedback_is_read_without_looking_up_each_character(monkeypatch):
    """An evaluation classifies every case's feedback: an ASCII one is read at the
    speed of a regular expression, not one category lookup per character."""
    import unicodedata

    from contract.evaluation import feedback_kind

    def one_by_one(char):
        raise AssertionError("looked up a character's category")

    monkeypatch.setattr(unicodedata, "category", one_by_one)
    assert feedback_kind("Correct.") == "generic"
    assert feedback_kind("Score: 0.5") == "generic"
    assert feedback_kind("Expected 'bug', got 'other'.") == "specific"


def test_non_ascii_feedback_is_still_read_by_categories():
    from contract.hints import tokens

    text = "¿Correcto? Ｅｘｐｅｃｔｅｄ « billing », सही नहीं"
    assert tokens(text) == _words_by_category(text)
    assert "expected" in tokens(text) and "सही" in tokens(text)
