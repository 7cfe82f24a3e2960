"""Every code the engine can emit has words in every language, and they render well."""

from __future__ import annotations

import pytest
from django.utils.translation import override

import sandbox
from contract.engine import run_check
from wording import codes, fill, render, words
from wording.contract import (
    ARTIFACT_ERRORS,
    BAD_SIGNATURES,
    CASE_STATUSES,
    CASES_ERRORS,
    CONVERT_OFFERS,
    CRASHES,
    HINTS,
    LOOKS_LIKE,
    NAME_NOT_IMPORTED,
    PROBLEMS,
    REWARD_SPEC_PROBLEMS,
    RUN_STATUSES,
    SKIP_REASONS,
    STAGE_NAMES,
    STAGE_STATUSES,
    SYNTAX_ERRORS,
)
from wording.providers import MODEL_ERRORS
from wording.sandbox import LAYER_NAMES, SANDBOX_UNAVAILABLE

LANGUAGES = ("en", "es", "hi")

# Each code family and the table that words it.
TABLES = {
    "stages": STAGE_NAMES,
    "stage_statuses": STAGE_STATUSES,
    "case_statuses": CASE_STATUSES,
    "syntax_error_reasons": SYNTAX_ERRORS,
    "signature_reasons": BAD_SIGNATURES,
    "reward_spec_codes": REWARD_SPEC_PROBLEMS,
    "crash_reasons": CRASHES,
    "skip_reasons": SKIP_REASONS,
    "model_error_codes": MODEL_ERRORS,
    "hints": HINTS,
    "layers": LAYER_NAMES,
    "cases_errors": CASES_ERRORS,
    "name_not_imported": NAME_NOT_IMPORTED,
    "looks_like": LOOKS_LIKE,
    "artifact_errors": ARTIFACT_ERRORS,
    "run_statuses": RUN_STATUSES,
    "sandbox_unavailable_reasons": SANDBOX_UNAVAILABLE,
}
ROUTED_ELSEWHERE = {
    "syntax_error",
    "bad_signature",
    # By the framework it recognised (FRAMEWORK_SIGNATURES).
    "framework_signature",
    "crashed",
    "model_error",
    "sandbox_unavailable",
    # By whether an import is known for the name (NAME_NOT_IMPORTED).
    "name_not_imported",
}


@pytest.mark.parametrize("family", sorted(TABLES))
def test_every_code_of_the_family_has_a_message(family):
    emitted = {**codes.all_codes(), "layers": sandbox.LAYERS}[family]
    missing = set(emitted) - set(TABLES[family])
    assert not missing


def test_every_problem_code_has_a_message():
    worded = set(PROBLEMS) | set(REWARD_SPEC_PROBLEMS) | ROUTED_ELSEWHERE
    assert set(codes.PROBLEMS) - worded == set()


@pytest.mark.parametrize("language", ["es", "hi"])
def test_every_message_is_translated(language):
    tables = [*TABLES.values(), PROBLEMS, CONVERT_OFFERS]
    untranslated = []
    for table in tables:
        for code, message in table.items():
            with override("en"):
                english = fill(message, {"count": 2})
            with override(language):
                local = fill(message, {"count": 2})
            # REWARD_SPEC is a name in metric.py and reads the same in every language.
            if local == english and code != "reward_spec":
                untranslated.append(code)
    assert untranslated == []


def test_docs_reasons_read_like_the_docs():
    with override("en"):
        assert words("side_info_not_dict", {"type": "str"}) == "No. The side info is not a dict."
        assert words("score_not_number", {"type": "str"}) == (
            "No. The score is a str, not a number."
        )
    with override("es"):
        assert words("side_info_not_dict", {}) == "No. La información adicional no es un dict."


def test_plural_forms_follow_the_count():
    with override("en"):
        one = words("cases_invalid", {"cases": [1], "count": 1})
        many = words("cases_invalid", {"cases": [0, 2], "count": 2})
    assert one == "1 case returned a value that breaks the contract (case 2)."
    assert many == "2 cases returned a value that breaks the contract (cases 1, 3)."


def test_missing_params_never_raise():
    with override("en"):
        assert "?" in words("file_too_large", {})
        assert words("no_such_code", {}) == "Unknown problem (no_such_code)."


def test_a_stored_result_renders_in_the_readers_language():
    stored = run_check(
        "def score(input, output):\n    return 0.8, 'Close.'\n", timeout_s=10
    ).to_dict()
    english = render(stored, "en")
    hindi = render(stored, "hi")
    assert english["cases"][0]["message"] == "No. The side info is not a dict."
    assert hindi["cases"][0]["message"] != english["cases"][0]["message"]
    assert hindi["stages"][4]["name"] == "मेट्रिक का रिटर्न मान"
    # The stored data itself holds codes, not words.
    assert "message" not in stored["cases"][0]


def test_the_generic_hint_shows_the_cases_own_example():
    mismatch = {"example": "mismatch", "expected": "'account'", "output": "'other'"}
    with override("en"):
        assert words("feedback_generic", mismatch, family="hint") == (
            "The feedback is a generic word. Name what is wrong, for example: "
            "Expected 'account', got 'other'."
        )
        match = words("feedback_generic", {"example": "match", "expected": "'bug'"}, family="hint")
        assert match.endswith("for example: Matches the expected 'bug'.")
        # A result stored without an example names no pair it never saw.
        stored = words("feedback_generic", {}, family="hint")
        assert "billing" not in stored and "?" not in stored


def test_printing_and_specific_feedback_have_words():
    with override("en"):
        printed = words("printed_output", {"printed": 5_000_000, "cut": 10}, family="hint")
        assert printed.startswith("This case printed 4.8\xa0MB.")
        assert words("feedback_specific", {}, family="hint").startswith("Specific feedback")


def test_every_return_value_problem_has_a_valid_example():
    from contract.codes import RETURN_VALUE_PROBLEMS
    from skynet.returns import check_return
    from wording.contract import RETURN_EXAMPLES

    assert set(RETURN_EXAMPLES) == set(RETURN_VALUE_PROBLEMS)
    for code, example in RETURN_EXAMPLES.items():
        assert example.startswith("return ") and "\n" not in example, code
        assert check_return(eval(example.removeprefix("return "))).valid, code


def test_the_new_hint_words_read_in_spanish_and_hindi():
    from wording.contract import GENERIC_EXAMPLES, OUTPUT_CUT

    new = [
        HINTS["feedback_generic"],
        HINTS["printed_output"],
        HINTS["feedback_specific"],
        *GENERIC_EXAMPLES.values(),
        OUTPUT_CUT,
    ]
    for message in new:
        with override("en"):
            english = str(message)
        for language in ("es", "hi"):
            with override(language):
                assert str(message) != english, (language, english)


def test_the_predictor_feedback_problems_read_in_english():
    with override("en"):
        assert words("predictor_feedback_not_dict", {"type": "list"}) == (
            'No. The feedback per predictor ("predictor_feedback") is a list, not a dict.'
        )
        assert words("predictor_name_not_string", {"name": "3"}) == (
            'No. The predictor name 3 in "predictor_feedback" is not a string.'
        )
        assert words("predictor_feedback_not_string", {"name": "first", "type": "bytes"}) == (
            "No. The feedback of the predictor first is a bytes, not a string."
        )
        assert words("predictor_feedback_empty", {"name": "second.predict"}) == (
            "No. The feedback of the predictor second.predict is empty."
        )
