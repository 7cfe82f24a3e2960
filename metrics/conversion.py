"""A metric.py converted to the contract, shaped for the review page: the diff, the notes
in the reader's words, and why nothing could be converted when nothing was."""

from __future__ import annotations

from dataclasses import dataclass, field

from contract.convert import ConvertError, convert
from metrics import code_display
from wording.convert import convert_error_words, note_words

FRAMEWORK_NAMES = {"dspy": "DSPy", "gepa": "gepa"}


@dataclass
class Review:
    """What the page shows: `converted` is the text that would be saved (None when the
    source could not be read), `rows` the side-by-side diff, `notes` (line, words)."""

    original: str
    converted: str | None
    framework: str = ""
    changed: bool = False
    rows: list = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    error: str = ""


def review(source: str) -> Review:
    """Convert `source` and say what changed; never raises for any text a user can paste."""
    try:
        conversion = convert(source)
    except ConvertError as exc:
        return Review(source, None, error=convert_error_words(exc.code, exc.params))
    except (RecursionError, MemoryError):
        return Review(
            source, None, error=convert_error_words("syntax_error", {"reason": "too_complex"})
        )
    return Review(
        original=source,
        converted=conversion.source,
        framework=FRAMEWORK_NAMES.get(conversion.framework or "", ""),
        changed=conversion.changed,
        rows=code_display.unified(source, conversion.source) if conversion.changed else [],
        notes=[(note.line, note_words(note.code, note.params)) for note in conversion.notes],
    )
