"""Feedback-quality hints: advice on valid cases, never a reason to fail the check.

Each hint is {"code", "case" (0-based index, or None for a hint about several
cases), "params"}. The text tests are heuristics over a few languages
(English, Spanish, Hindi) and are meant to err towards silence.

A case gets at most one hint about its feedback, the most precise that applies:
feedback_empty, then feedback_restates_score ("Score: 0"), then feedback_generic,
then feedback_too_short, and only when none of those fired, feedback_not_actionable
for a low-scoring case whose text is long but vague. Each of the first ones already
says what the text lacks, so a second hint on the same case would only repeat it.

feedback_generic fires only where a bare "right"/"wrong" word hides something:
on a case whose score shows a fault (`faulty_scores`), or whose feedback is the
same as that of a case that scored differently. "Correct." on a perfect score
is what an exact-match metric should say, and gets no hint at all (neither
generic nor too short). Its example fix is built from that case's own expected
value and output (`example_params`), never from a fixed pair.

Besides the advice, `feedback_notes` gives a positive note, feedback_specific,
to a case whose feedback is specific (see `is_specific`), and `printed_hints`
tells a case that printed a lot that printing in score is wasted work.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from contract.results import Hint

MIN_FEEDBACK_LENGTH = 12
# How much of a case's value is shown in an example fix.
EXAMPLE_LIMIT = 60
# A case that printed more than this (stdout and stderr, in bytes) gets printed_output.
PRINTED_HINT_BYTES = 4096

# Words that say only "right" or "wrong". Feedback made of nothing else is generic.
GENERIC_WORDS = frozenset(
    """
    correct correctly incorrect incorrectly right wrong ok okay good bad fine great perfect
    nice excellent poor error errors fail failed fails failure pass passed passes success
    successful invalid valid yes no not true false match matched mismatch format formatting
    answer output response result the a an is it this that was very completely totally
    partially partly mostly close almost accepted rejected done try again sorry well job
    correcto correcta incorrecto incorrecta bien mal malo mala bueno buena error errores
    fallo falla formato respuesta salida erróneo errónea equivocado equivocada válido válida
    inválido inválida sí si es el la muy perfecto perfecta
    गलत ग़लत सही ठीक त्रुटि उत्तर जवाब प्रारूप अच्छा बुरा विफल सफल है नहीं हाँ हां गलती
    """.split()
)

# Labels and filler around a number: "Score: 0.5", "You got 3 out of 5 points".
_SCORE_WORDS = frozenset(
    """
    score scored scores accuracy points point pts result reward value grade rating total
    final overall out of the is was your you got a puntuación puntaje nota resultado de
    अंक स्कोर
    """.split()
)
_SCORE_REST = re.compile(r"^[\s\d.,/%:=+\-()\[\]!]*$")

# Words and phrases that point at what is wrong or what right looks like.
# ASCII ones match whole words; others (accents, Devanagari) match as substrings.
SIGNALS = (
    "expected expect expects expecting should must missing misses missed lacks lacking "
    "omits omitted got instead rather needs required requires because contains includes "
    "mentions extra trailing unexpected but wanted add remove include use avoid replace "
    "change esperado esperada esperaba debería debe deben falta faltan faltó obtuvo "
    "porque contiene incluye sobra sobran agrega añade elimina usa "
    "अपेक्षित चाहिए गायब मिला क्योंकि"
).split() + [
    "not valid",
    "isn't valid",
    "too long",
    "too short",
    "too many",
    "too few",
    "no es válido",
    "no es válida",
    "en lugar de",
    "en vez de",
    "के बजाय",
    "की जगह",
]

# A quoted span: any double-quote-like mark or backtick, or a pair of single
# quotes around text (not an apostrophe as in "doesn't").
_QUOTE = re.compile(r"[\"“”«»„`「」]|(?<!\w)'[^'\n]+'(?!\w)|‘[^’\n]+’")
_DIGIT = re.compile(r"\d")
_COLON_DETAIL = re.compile(r"[:：]\s*(.+)")


# In ASCII the letters and digits are the only characters of categories L, M and N, and
# NFKC changes nothing: an evaluation reads thousands of feedbacks, mostly ASCII, and a
# regular expression reads them many times faster than a category per character.
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _normal(text: str) -> str:
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """Words of text: runs of letters, marks and digits (marks keep Devanagari vowels whole)."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    words, current = [], []
    for char in _normal(text):
        if unicodedata.category(char)[0] in "LMN":
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


def is_generic(text: str) -> bool:
    """True when text is only words that say right/wrong ("Correct.", "Wrong format.")."""
    words = tokens(text)
    return bool(words) and all(word in GENERIC_WORDS for word in words)


def restates_score(text: str) -> bool:
    """True when text is only a score: "0.5", "Score: 0.5", "0/1", "50%", "3 out of 5"."""
    rest = _normal(text)
    for word in tokens(text):
        if word in _SCORE_WORDS:
            rest = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", " ", rest)
    return bool(_DIGIT.search(rest)) and bool(_SCORE_REST.match(rest))


def _has_signal(normal: str) -> bool:
    for signal in SIGNALS:
        if signal.isascii():
            if re.search(rf"\b{re.escape(signal)}\b", normal):
                return True
        elif signal in normal:
            return True
    return False


def is_actionable(text: str) -> bool:
    """True when feedback says what is wrong or what a correct output looks like.

    Heuristic, unless the text only restates a score, any of: a signal word or
    phrase (SIGNALS: "expected", "should", "missing", "got", "instead", "must",
    "not valid"...), a quoted span, a digit, or a colon followed by at least
    two words that are not all generic
    ("Wrong: the date is missing" yes, "Result: wrong answer" no).
    """
    if restates_score(text):  # its digits are the score, not a detail
        return False
    normal = _normal(text)
    if _has_signal(normal) or _QUOTE.search(text) or _DIGIT.search(text):
        return True
    match = _COLON_DETAIL.search(text)
    if match:
        detail = match.group(1)
        return len(tokens(detail)) >= 2 and not is_generic(detail)
    return False


def is_specific(text: str) -> bool:
    """True when feedback is specific enough to earn the positive note.

    The rule: the text raises none of the wording hints (it is not empty, not
    only a score, not only generic words, and at least MIN_FEEDBACK_LENGTH
    characters long) and it is actionable (`is_actionable`): it names a detail,
    what is wrong ("got", "missing", a number...) or what a correct output looks
    like ("expected", "should", a quoted value). "Expected 'bug', got 'other'."
    and "Matches the expected label 'billing'." are specific; "All good here." is not.
    """
    text = text.strip()
    return (
        len(text) >= MIN_FEEDBACK_LENGTH
        and not restates_score(text)
        and not is_generic(text)
        and is_actionable(text)
    )


def shown(value: object) -> str:
    """A value as an example fix shows it: a str quoted as Python's repr does
    ('billing'), anything else as compact JSON; the only value of a one-key dict
    stands for the dict ({"label": "bug"} reads 'bug'). Cut at EXAMPLE_LIMIT."""
    if type(value) is dict and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= EXAMPLE_LIMIT else text[: EXAMPLE_LIMIT - 1] + "…"


@dataclass(frozen=True)
class ScoredCase:
    """What the hints need of a valid case. `expected_text` and `output_text` are
    the case's expected value and output as an example fix shows them (`shown`);
    None when unknown (no expected value, say)."""

    index: int
    score: float
    feedback: str
    bool_score: bool = False
    expected_text: str | None = None
    output_text: str | None = None


def low_scores(cases: Sequence[ScoredCase]) -> set[int]:
    """Indexes of low-scoring cases: below 0.5 when every score is in [0, 1],
    otherwise below the highest score among the cases."""
    if not cases:
        return set()
    scores = [c.score for c in cases]
    if all(0 <= s <= 1 for s in scores):
        return {c.index for c in cases if c.score < 0.5}
    top = max(scores)
    return {c.index for c in cases if c.score < top}


def faulty_scores(cases: Sequence[ScoredCase]) -> set[int]:
    """Indexes of cases whose score shows something is wrong: below 1 when every
    score is in [0, 1], otherwise below the highest score among the cases."""
    if not cases:
        return set()
    scores = [c.score for c in cases]
    top = 1.0 if all(0 <= s <= 1 for s in scores) else max(scores)
    return {c.index for c in cases if c.score < top}


def example_params(case: ScoredCase, faulty: bool) -> dict:
    """The example fix of feedback_generic, from the case's own values: "mismatch"
    (Expected X, got Y) for a faulty case, "match" (Matches the expected X) for one
    that scored well, "output" (only the output is known); {} when nothing is."""
    expected, output = case.expected_text, case.output_text
    if expected is not None and output is not None:
        kind = "mismatch" if faulty and expected != output else "match"
        return {"example": kind, "expected": expected, "output": output}
    if output is not None:
        return {"example": "output", "output": output}
    return {}


def _case_hints(case: ScoredCase, low: bool, faulty: bool, same: bool) -> list[Hint]:
    text = case.feedback.strip()
    if not text:
        return [Hint("feedback_empty", case.index)]
    if restates_score(text):
        return [Hint("feedback_restates_score", case.index)]
    if is_generic(text):
        if faulty or same:
            return [Hint("feedback_generic", case.index, example_params(case, faulty))]
        # A bare "Correct." on a case that scored well says all there is to say.
        return []
    if len(text) < MIN_FEEDBACK_LENGTH:
        params = {"length": len(text), "minimum": MIN_FEEDBACK_LENGTH}
        return [Hint("feedback_too_short", case.index, params)]
    if low and not is_actionable(text):
        return [Hint("feedback_not_actionable", case.index, {"score": case.score})]
    return []


def _same_groups(cases: Sequence[ScoredCase]) -> list[list[ScoredCase]]:
    """Groups of cases with the same (non-empty) feedback but different scores."""
    groups: dict[str, list[ScoredCase]] = {}
    for case in cases:
        key = " ".join(_normal(case.feedback).split())
        if key:  # empty feedback has its own hint
            groups.setdefault(key, []).append(case)
    return [group for group in groups.values() if len({c.score for c in group}) > 1]


def _same_feedback(cases: Sequence[ScoredCase]) -> list[Hint]:
    hints = []
    for group in _same_groups(cases):
        params = {"cases": [c.index for c in group], "scores": [c.score for c in group]}
        hints.append(Hint("feedback_same_for_different_scores", None, params))
    return hints


def compute_hints(cases: Sequence[ScoredCase], *, has_reward_spec: bool) -> list[Hint]:
    """Hints for the valid cases, per case in index order, then those about several cases."""
    low, faulty = low_scores(cases), faulty_scores(cases)
    same = {c.index for group in _same_groups(cases) for c in group}
    hints: list[Hint] = []
    for case in sorted(cases, key=lambda c: c.index):
        if case.bool_score:
            hints.append(Hint("bool_score", case.index))
        elif not has_reward_spec and math.isfinite(case.score) and not 0 <= case.score <= 1:
            hints.append(Hint("score_out_of_range", case.index, {"score": case.score}))
        hints += _case_hints(case, case.index in low, case.index in faulty, case.index in same)
    return hints + _same_feedback(cases)


def feedback_notes(cases: Sequence[ScoredCase]) -> list[Hint]:
    """A feedback_specific note for each case whose feedback `is_specific` and is not
    the same as that of a case that scored differently, in index order."""
    same = {c.index for group in _same_groups(cases) for c in group}
    return [
        Hint("feedback_specific", case.index)
        for case in sorted(cases, key=lambda c: c.index)
        if case.index not in same and is_specific(case.feedback)
    ]


def printed_hints(printed: Sequence[tuple[int, int, int]]) -> list[Hint]:
    """printed_output for each (index, bytes printed, bytes cut) of a case that printed
    more than PRINTED_HINT_BYTES or had its output cut: what a case prints is captured,
    sent to the worker and stored for every case of every check, so printing in score
    costs time and space and the optimizer never reads it (it reads the feedback)."""
    return [
        Hint("printed_output", index, {"printed": total, "cut": cut})
        for index, total, cut in printed
        if total > PRINTED_HINT_BYTES or cut > 0
    ]
