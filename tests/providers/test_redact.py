"""redact.scrub(): the key out of a provider's text, in every form a provider may echo it."""

from __future__ import annotations

import base64

import pytest

from providers.redact import scrub
from tests.providers.echoes import KEY, echoes, leaked, scrubbed

FORMS = echoes()
OPENAI_401 = (
    "Incorrect API key provided: {echo}. You can find your API key at "
    "https://platform.openai.com/account/api-keys."
)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_becomes_stars_and_the_rest_stays(name):
    echo = FORMS[name]
    text = OPENAI_401.format(echo=echo)
    assert scrub(text, KEY) == OPENAI_401.format(echo=scrubbed(echo))


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_is_scrubbed_wherever_it_stands(name):
    echo = FORMS[name]
    for text in (echo, f"({echo})", f"key={echo};", f"{echo}\n{echo}", f'"{echo}",'):
        result = scrub(text, KEY)
        assert leaked(result) == [] and "***" in result, (text, result)
        assert not any(piece in result for piece in _pieces(echo)), (text, result)


def _pieces(echo: str, size: int = 10) -> list[str]:
    """The echo's pieces that could only come from it (for base64, separated forms)."""
    body = echo.removeprefix("Basic ")
    return [body[i : i + size] for i in range(max(1, len(body) - size + 1))]


def test_the_forms_are_what_they_say():
    # So that the tests above mean something: the URL-safe forms differ from the
    # standard ones, the Basic forms put the key at each of the three byte alignments,
    # and the plain leak check sees the masked and separated forms.
    assert FORMS["basic_2_standard_padded"] != FORMS["basic_2_urlsafe_padded"]
    assert FORMS["base64_standard_padded"].endswith("=")
    assert not FORMS["base64_standard_bare"].endswith("=")
    alignments = set()
    for users in (1, 2, 3):
        decoded = base64.b64decode(FORMS[f"basic_{users}_standard_padded"].split()[1])
        alignments.add(decoded.index(KEY.encode()) % 3)
    assert alignments == {0, 1, 2}
    assert leaked(FORMS["masked_ellipsis"]) and leaked(FORMS["masked_dots_suffix"])
    assert leaked(FORMS["separated_zero_width"])  # seen once the separators are out


def test_the_whole_token_goes():
    assert scrub(f"Authorization: Bearer {KEY}", KEY) == "Authorization: Bearer ***"
    assert scrub(f"token {KEY}xyz and {KEY[:-1]}", KEY) == "token *** and ***"
    assert scrub(f"x-api-key={KEY}; retry", KEY) == "***; retry"
    assert scrub(f"{KEY},{KEY}", KEY) == "***,***"
    assert scrub("Key: " + " ".join(KEY) + " (sent twice: " + KEY + ")", KEY) == (
        "Key: *** (sent twice: ***)"
    )


def test_case_is_ignored_for_the_letters_and_digits():
    assert scrub(f"KEY {KEY.upper()} END", KEY) == "KEY *** END"


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: sk-wr***ng. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "The model `gpt-test` does not exist or you do not have access to it.",
        "Rate limit reached for requests. Limit: 3, used: 3...",
        "Basic dXNlcjpwYXNzd29yZA== is not accepted",
        "keys look like sk-…",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "",
    ],
)
def test_text_without_the_key_is_left_alone(text):
    assert scrub(text, KEY) == text


def test_a_short_or_empty_secret_changes_nothing():
    assert scrub("the key abc was wrong", "abc") == "the key abc was wrong"
    assert scrub("anything", "") == "anything"


def test_a_long_text_full_of_echoes():
    forms = list(FORMS.values())
    text = " ".join(f"attempt {i}: {forms[i % len(forms)]}." for i in range(500))
    result = scrub(text, KEY)
    assert leaked(result) == []
    assert result.count("***") == 500
