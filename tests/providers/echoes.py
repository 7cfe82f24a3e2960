"""The forms in which a provider may echo the key it was given, and a check for leaks."""

from __future__ import annotations

import base64

# Shaped like an OpenAI project key; "~" makes standard and URL-safe base64 differ.
KEY = "sk-proj-Q7x_9kL~mN2pR4tV6wY8aB3cD5eF1gH0j"


def _b64(data: bytes, *, urlsafe: bool = False, padded: bool = True) -> str:
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
    return text if padded else text.rstrip("=")


def echoes(key: str = KEY) -> dict[str, str]:
    """name -> the key as a provider may quote it."""
    forms = {
        "whole": key,
        "truncated": key[:20],
        "masked_ellipsis": f"{key[:5]}…{key[-4:]}",
        "masked_stars": f"{key[:5]}****{key[-4:]}",
        "masked_dots_suffix": f"...{key[-4:]}",
        "masked_prefix_stars": f"{key[:12]}****",
        "masked_openai": f"{key[:8]}{'*' * 28}{key[-4:]}",
        "masked_bullets": f"••••{key[-4:]}",
        "masked_prefix_ellipsis": f"{key[:7]}…",
    }
    for name, separator in {
        "space": " ",
        "dash": "-",
        "dot": ".",
        "underscore": "_",
        "spaced_dash": " - ",
        "zero_width": "\u200b",
        "word_joiner": "\u2060",
        "nbsp": "\u00a0",
        "zero_width_space": "\u200b ",
    }.items():
        forms[f"separated_{name}"] = separator.join(key)
    raw = key.encode()
    for urlsafe in (False, True):
        for padded in (False, True):
            kind = f"{'urlsafe' if urlsafe else 'standard'}_{'padded' if padded else 'bare'}"
            forms[f"base64_{kind}"] = _b64(raw, urlsafe=urlsafe, padded=padded)
            # Basic base64(user:key): users of 0, 1 and 2 characters (plus ":") put the
            # key at each of the three byte alignments.
            for user in ("ab", "", "a"):
                encoded = _b64(f"{user}:{key}".encode(), urlsafe=urlsafe, padded=padded)
                forms[f"basic_{len(user) + 1}_{kind}"] = f"Basic {encoded}"
            inside = _b64(b"\x00\x01header:" + raw + b"|trailer", urlsafe=urlsafe, padded=padded)
            forms[f"base64_inside_{kind}"] = inside
    return forms


def scrubbed(echo: str) -> str:
    """What redact.scrub() leaves of an echo: "***", after the word Basic if it has one."""
    return "Basic ***" if echo.startswith("Basic ") else "***"


def leaked(text: str, key: str = KEY) -> list[str]:
    """What `text` still shows of `key`: any 8 characters in a row from anywhere in it, or
    4 in a row from its first or last 8; and any 8 of its letters and digits in a row
    once everything else is taken out of `text` (a key with separators put in)."""
    runs = {key[i : i + 8] for i in range(len(key) - 7)}
    runs |= {key[:8][i : i + 4] for i in range(5)} | {key[-8:][i : i + 4] for i in range(5)}
    found = sorted(run for run in runs if run in text)
    skeleton, squeezed = _alnum(key).lower(), _alnum(text).lower()
    spread = {skeleton[i : i + 8] for i in range(len(skeleton) - 7)}
    return found + sorted(f"~{run}" for run in spread if run in squeezed)


def _alnum(text: str) -> str:
    return "".join(c for c in text if c.isascii() and c.isalnum())
