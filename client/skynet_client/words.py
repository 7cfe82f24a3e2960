"""The command line's own words in the reader's language: --language, else
SKYNET_LANGUAGE, else LANG (the server's words come in the same language, through
Accept-Language). The catalogues are gettext's, in skynet_client/locale/<lang>/LC_MESSAGES/
skynet.po, compiled to the .mo files beside them, which are committed: installing needs no
gettext. `python3 scripts/client_catalogue.py` refreshes them from the marked strings.

A sentence is marked whole, with named {placeholders} (Python's str.format), so a
translation can put them where its grammar wants them."""

from __future__ import annotations

import gettext
import os
from pathlib import Path

LOCALE = Path(__file__).with_name("locale")
DOMAIN = "skynet"
LANGUAGES = ("en", "es", "hi")

_active: gettext.NullTranslations = gettext.NullTranslations()


def language(explicit: str | None = None) -> str:
    raw = explicit or os.environ.get("SKYNET_LANGUAGE") or os.environ.get("LANG") or "en"
    code = raw.split(".")[0].split("_")[0].lower()
    return code if code in LANGUAGES else "en"


def use(code: str) -> None:
    global _active
    _active = gettext.translation(DOMAIN, LOCALE, languages=[code], fallback=True)


def _(message: str) -> str:
    return _active.gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    return _active.ngettext(singular, plural, count)


def number(value: float | None) -> str:
    """A score or a mean as the lines print it: four significant digits, or "none"."""
    return _("none") if value is None else f"{value:.4g}"


def case_status(code: str) -> str:
    """How a case ended (a status code of the API's), in words."""
    said = {
        "valid": _("valid"),
        "invalid": _("invalid"),
        "error": _("error"),
        "timeout": _("timed out"),
        "skipped": _("not run"),
    }
    return said.get(code, code)
