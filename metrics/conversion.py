"""A metric.py converted to the contract, shaped for the review page: the diff, the notes
in the reader's words, and why nothing could be converted when nothing was.

Converting costs seconds of CPU for a long file, so a web thread never does it itself:
the conversion runs in a child process held to CONVERT_SECONDS and CONVERT_MEGABYTES
(contract.convert.bounded), one at a time per user, CONVERT_RATE_PER_MINUTE a minute,
and what it made is kept by the text's digest (metrics.models.Conversion), so a saved
version's page and an import's "Create" read it back instead of converting again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from contract.convert import CONVERTER_VERSION, ConvertError
from contract.convert.bounded import convert_bounded, from_dict
from jobs import limits
from metrics import code_display
from metrics.models import Conversion
from wording.convert import convert_error_words, note_words

FRAMEWORK_NAMES = {"dspy": "DSPy", "gepa": "gepa"}
# Errors that say something of the text itself, kept like a conversion; the others
# ("too_costly", a refusal) depend on the moment and are tried again next time.
_KEPT_ERRORS = {"syntax_error", "internal_error"}


@dataclass
class Review:
    """What the page shows: `converted` is the text that would be saved (None when the
    source could not be converted), `rows` the side-by-side diff, `notes` (line, words)."""

    original: str
    converted: str | None
    framework: str = ""
    changed: bool = False
    rows: list = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    error: str = ""
    # Where several functions could be the metric: their names, to pick one and convert.
    choices: list[str] = field(default_factory=list)
    metric: str = ""  # the one picked


def digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def review(source: str, owner: AbstractBaseUser, metric: str | None = None) -> Review:
    """`source` converted for `owner` (`metric` naming the function where several could
    be the metric) and said what changed; never raises for any text a user can paste."""
    result = conversion_of(source, owner, metric)
    if "error" in result:
        error = result["error"]
        return Review(source, None, error=convert_error_words(error["code"], error["params"]))
    conversion = from_dict(result)
    return Review(
        original=source,
        converted=conversion.source,
        framework=FRAMEWORK_NAMES.get(conversion.framework or "", ""),
        changed=conversion.changed,
        rows=code_display.unified(source, conversion.source) if conversion.changed else [],
        notes=[(note.line, note_words(note.code, note.params)) for note in conversion.notes],
        choices=[
            str(name)
            for note in conversion.notes
            if note.code == "several_metric_functions"
            for name in note.params.get("names", [])
        ],
        metric=metric or "",
    )


def conversion_of(source: str, owner: AbstractBaseUser, metric: str | None = None) -> dict:
    """The kept conversion of `source`, or a new one within the limits: a Conversion's
    to_dict(), or {"error": {"code", "line", "params"}}."""
    # Kept by the text and the converter's version: a better converter converts again.
    key = digest(f"{CONVERTER_VERSION}\n{metric or ''}\n{source}")
    kept = Conversion.objects.filter(owner=owner, digest=key).values_list("result", flat=True)
    for result in kept:
        return result
    if not limits.lease(owner, limits.CONVERTING, seconds=settings.CONVERT_SECONDS * 2 + 10):
        return _error("convert_busy", {})
    try:
        if not limits.take(owner, limits.CONVERT, per_minute=settings.CONVERT_RATE_PER_MINUTE):
            return _error("convert_rate_limited", {"limit": settings.CONVERT_RATE_PER_MINUTE})
        try:
            result = convert_bounded(
                source,
                seconds=settings.CONVERT_SECONDS,
                megabytes=settings.CONVERT_MEGABYTES,
                metric=metric,
            ).to_dict()
        except ConvertError as exc:
            result = _error(exc.code, exc.params, exc.line)
            if exc.code not in _KEPT_ERRORS:
                return result
    finally:
        limits.release(owner, limits.CONVERTING)
    _keep(owner, key, result)
    return result


def _error(code: str, params: dict, line: int | None = None) -> dict:
    return {"error": {"code": code, "line": line, "params": params}}


def _keep(owner: AbstractBaseUser, key: str, result: dict) -> None:
    try:
        with transaction.atomic():
            Conversion.objects.create(owner=owner, digest=key, result=result)
    except IntegrityError:
        return  # the same text, converted by another of the user's requests
    old = Conversion.objects.filter(owner=owner).values_list("pk", flat=True)[Conversion.KEPT :]
    Conversion.objects.filter(pk__in=list(old)).delete()
