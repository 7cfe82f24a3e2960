"""Scrub a secret (an API key) out of text a provider sent back, in every form it may take.

Providers echo the key they were given in their error messages, and those messages
reach the metric. A plain replace() misses most echoes, so `scrub()` looks for:

- any run of 8 or more of the key's characters, whatever their case (the whole key, or
  a truncated echo);
- the same with separators inserted between its characters: spaces, dashes, dots,
  underscores, zero-width or any other characters that are not ASCII letters or digits
  (up to MAX_SEPARATOR of them between two, compared on the key's letters and digits);
- base64 of any 8 bytes of the key, standard or URL-safe, padded or not, at each of the
  three byte alignments, so it is found inside a longer base64 string such as
  `Basic base64(user:key)`;
- masked forms that show the key's first or last characters (at least 4 of them) next
  to a mask: `sk-ab…1234`, `sk-ab****1234`, `...1234`, `sk-proj-abcd****`.

Each match is widened to the whole word or token around it, which becomes "***": the
rest of a token that holds the key (of a base64 blob, say) is as telling as the key.
"""

from __future__ import annotations

import base64
import bisect
import math
import re

REPLACEMENT = "***"
# A run this long of the key's characters (raw, or its letters and digits with
# separators between them) is treated as the key.
RUN = 8
# A mask with at least this many of the key's first or last characters next to it.
MASK_VISIBLE = 4
# At most this many separator characters between two of the key's characters.
MAX_SEPARATOR = 5

# Characters that make up a token (key, base64, masked key): ASCII letters and digits,
# base64's and keys' punctuation, mask characters and invisible characters a provider
# (or an attacker) may put inside one.
_TOKEN_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "-_+/=*•·…\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
)
_CLASS = f"[{re.escape(''.join(sorted(_TOKEN_CHARS)))}]"
# A run of dots is a mask ("sk-ab..."), one dot joins only what follows ("openai.com"):
# the dot that ends a sentence stays.
_TOKEN = re.compile(f"(?:{_CLASS}|\\.{{2,}}|\\.(?={_CLASS}))+")
_MASK = re.compile(r"\*+|…+|•+|·+|\.{2,}")


def scrub(text: str, secret: str) -> str:
    """`text` with every form of `secret` (see the module docstring) replaced by "***"."""
    if len(secret) < MASK_VISIBLE or not text:
        return text  # too short to tell from ordinary text (no real key is)
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    spans = [*_runs(text, secret), *_spread(text, secret), *_base64(text, secret)]
    spans += _masked(text, tokens, secret)
    if not spans:
        return text
    return _replace(text, [_widen(tokens, start, end) for start, end in spans])


def _runs(text: str, secret: str) -> list[tuple[int, int]]:
    """Runs of RUN characters of the key, as they are in it (whatever their case)."""
    size = min(RUN, len(secret))
    windows = {secret[i : i + size] for i in range(len(secret) - size + 1)}
    return _find(text, [re.escape(window) for window in sorted(windows)])


def _find(text: str, patterns: list[str]) -> list[tuple[int, int]]:
    """Where any of `patterns` matches, without case. A lookahead finds the overlapping
    matches too, so the spans of a long echo overlap and merge into one, leaving no
    short tail behind."""
    found = re.finditer(f"(?=({'|'.join(patterns)}))", text, re.IGNORECASE)
    return [m.span(1) for m in found]


def _spread(text: str, secret: str) -> list[tuple[int, int]]:
    """Runs of RUN of the key's letters and digits with 1 to MAX_SEPARATOR other
    characters inserted between every two of its characters."""
    # Each letter or digit, and how many other characters follow it in the key: those,
    # and the separators put around each of them, may stand between it and the next.
    # At least one must: a run with no separators is _runs()'s, and one with some
    # missing is more likely the key's end running into the next word.
    chars = [(c, len(rest)) for c, rest in re.findall(r"([0-9A-Za-z])([^0-9A-Za-z]*)", secret)]
    size = min(RUN, len(chars))
    if not size:
        return []
    windows = set()
    for i in range(len(chars) - size + 1):
        window = chars[i : i + size]
        parts = [
            re.escape(c) + f"[^0-9A-Za-z]{{1,{MAX_SEPARATOR * (gap + 1) + gap}}}"
            for c, gap in window[:-1]
        ]
        windows.add("".join(parts) + re.escape(window[-1][0]))
    return _find(text, sorted(windows))


def _base64(text: str, secret: str) -> list[tuple[int, int]]:
    spans = []
    for core in _base64_cores(secret.encode()):
        start = text.find(core)
        while start != -1:
            spans.append((start, start + len(core)))
            start = text.find(core, start + 1)
    return spans


def _base64_cores(data: bytes) -> set[str]:
    """The base64 characters that depend only on a RUN-byte window of `data`, at each
    byte alignment: what any base64 text containing those bytes must contain."""
    cores = set()
    size = min(RUN, len(data))
    for i in range(len(data) - size + 1):
        window = data[i : i + size]
        for offset in range(3):
            encoded = base64.b64encode(bytes(offset) + window).decode()
            # Characters wholly inside the window's bits: from ceil(8*offset / 6) up to
            # floor(8*(offset + size) / 6).
            first, last = -(-8 * offset // 6), 8 * (offset + size) // 6
            core = encoded[first:last]
            if len(core) >= 4:
                cores.add(core)
                cores.add(core.replace("+", "-").replace("/", "_"))
    return cores


def _masked(text: str, tokens: list[tuple[int, int]], secret: str) -> list[tuple[int, int]]:
    """Tokens with a mask next to at least MASK_VISIBLE of the key's first or last
    characters."""
    key = secret.lower()
    spans = []
    for start, end in tokens:
        token = text[start:end]
        masks = list(_MASK.finditer(token))
        if not masks:
            continue
        head, tail = token[: masks[0].start()].lower(), token[masks[-1].end() :].lower()
        if _ends_with_prefix(head, key) or _starts_with_suffix(tail, key):
            spans.append((start, end))
    return spans


def _ends_with_prefix(head: str, key: str) -> bool:
    return any(head.endswith(key[:k]) for k in range(MASK_VISIBLE, min(len(head), len(key)) + 1))


def _starts_with_suffix(tail: str, key: str) -> bool:
    return any(tail.startswith(key[-k:]) for k in range(MASK_VISIBLE, min(len(tail), len(key)) + 1))


def _widen(tokens: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """text[start:end] and every token it touches, whole."""
    i = max(0, bisect.bisect_right(tokens, (start, math.inf)) - 1)
    while i < len(tokens) and tokens[i][0] < end:
        if tokens[i][1] > start:
            start, end = min(start, tokens[i][0]), max(end, tokens[i][1])
        i += 1
    return start, end


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    """Overlapping or touching spans merged, each replaced by one REPLACEMENT."""
    parts: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if parts and start <= parts[-1][1]:
            parts[-1] = (parts[-1][0], max(parts[-1][1], end))
        else:
            parts.append((start, end))
    out, at = [], 0
    for start, end in parts:
        out.append(text[at:start])
        out.append(REPLACEMENT)
        at = end
    out.append(text[at:])
    return "".join(out)
