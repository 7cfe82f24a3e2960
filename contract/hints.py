"""Feedback-quality hints: advice on valid cases, never a reason to fail the check.

Each hint is {"code", "case" (0-based index, or None for a hint about several
cases), "params"}. The text tests are heuristics over a few languages
(English, Spanish, Hindi) and are meant to err towards silence.

Overlaps are trimmed so one case does not collect the same advice twice:

- feedback_empty suppresses every other feedback hint on that case;
- feedback_restates_score and feedback_generic suppress feedback_too_short
  (they say more precisely what is wrong with a short text);
- feedback_restates_score suppresses feedback_generic ("Score: 0" is both);
- feedback_not_actionable is kept alongside generic / restates / too_short:
  it is the one hint about what a low-scoring case needs (the docs' poor
  examples "Incorrect." and "Wrong format." must raise it), while the others
  are about the wording.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from contract.results import Hint

MIN_FEEDBACK_LENGTH = 12

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


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """Words of text: runs of letters, marks and digits (marks keep Devanagari vowels whole)."""
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


@dataclass(frozen=True)
class ScoredCase:
    """What the hints need of a valid case."""

    index: int
    score: float
    feedback: str
    bool_score: bool = False


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


def _case_hints(case: ScoredCase, low: bool) -> list[Hint]:
    text = case.feedback.strip()
    if not text:
        return [Hint("feedback_empty", case.index)]
    hints = []
    restated = restates_score(text)
    generic = not restated and is_generic(text)
    if restated:
        hints.append(Hint("feedback_restates_score", case.index))
    elif generic:
        hints.append(Hint("feedback_generic", case.index))
    elif len(text) < MIN_FEEDBACK_LENGTH:
        params = {"length": len(text), "minimum": MIN_FEEDBACK_LENGTH}
        hints.append(Hint("feedback_too_short", case.index, params))
    if low and not is_actionable(text):
        hints.append(Hint("feedback_not_actionable", case.index, {"score": case.score}))
    return hints


def _same_feedback(cases: Sequence[ScoredCase]) -> list[Hint]:
    groups: dict[str, list[ScoredCase]] = {}
    for case in cases:
        key = " ".join(_normal(case.feedback).split())
        if key:  # empty feedback has its own hint
            groups.setdefault(key, []).append(case)
    hints = []
    for group in groups.values():
        if len({c.score for c in group}) > 1:
            params = {"cases": [c.index for c in group], "scores": [c.score for c in group]}
            hints.append(Hint("feedback_same_for_different_scores", None, params))
    return hints


def compute_hints(cases: Sequence[ScoredCase], *, has_reward_spec: bool) -> list[Hint]:
    """Hints for the valid cases, per case in index order, then those about several cases."""
    low = low_scores(cases)
    hints: list[Hint] = []
    for case in sorted(cases, key=lambda c: c.index):
        if case.bool_score:
            hints.append(Hint("bool_score", case.index))
        elif not has_reward_spec and math.isfinite(case.score) and not 0 <= case.score <= 1:
            hints.append(Hint("score_out_of_range", case.index, {"score": case.score}))
        hints += _case_hints(case, case.index in low)
    return hints + _same_feedback(cases)
