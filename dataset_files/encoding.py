"""Bytes to text: UTF-8, then a BOM's word, then charset-normalizer's guess."""

from __future__ import annotations

import codecs

from charset_normalizer import from_bytes

from dataset_files.errors import DatasetError

# Files users mistake for a table; named so the message can say what to do
# (save an Excel workbook as CSV, say) rather than "cannot read".
_SIGNATURES = (
    (b"PK\x03\x04", "zip"),  # .xlsx, .ods, .docx
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole2"),  # .xls
    (b"%PDF-", "pdf"),
    (b"\x1f\x8b", "gzip"),
    (b"PAR1", "parquet"),
)
# UTF-32's little-endian BOM begins with UTF-16's, so it is tried first.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32", "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32", "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16", "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16", "utf-16-be"),
)
# charset-normalizer ranks code pages that decode a text without "chaos"
# (odd symbols mid-word) by a language guess, which a few accented letters
# cannot settle: French or English text from a spreadsheet saved as CSV on
# Western Windows (the most common non-UTF-8 upload) comes out as cp1250 or
# cp850, "è" read as "č". Among the guesses with the least chaos, these win in
# this order; Polish, Czech, Russian, Greek or Turkish text makes chaos in
# cp1252, so their own code page still wins.
_PREFERRED = ("cp1252",)
_TIE = 1e-3


def decode(data: bytes) -> tuple[str, str, bool]:
    """(text without BOM, codec name, guessed?) or DatasetError not_text / undecodable."""
    for signature, kind in _SIGNATURES:
        if data.startswith(signature):
            raise DatasetError("not_text", params={"kind": kind})
    text, encoding, guessed = _decode(data)
    # A NUL never belongs in a CSV or JSON Lines file: this is a binary file
    # that happened to decode.
    if "\x00" in text:
        raise DatasetError("not_text", params={"kind": "unknown"})
    return text, encoding, guessed


def _decode(data: bytes) -> tuple[str, str, bool]:
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data, "utf-8-sig", "utf-8-sig"), "utf-8-sig", False
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            # The codec without an endianness reads and drops the BOM itself.
            return _strict(data, codec, name), name, False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    # ASCII text in UTF-16 without a BOM is valid UTF-8 full of NULs: guess.
    if text is not None and "\x00" not in text:
        return text, "utf-8", False
    codec = _guess(data)
    name = codecs.lookup(codec).name
    return _strict(data, codec, name), name, True


def _strict(data: bytes, codec: str, name: str) -> str:
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        raise DatasetError("undecodable", params={"encoding": name}) from None


def _guess(data: bytes) -> str:
    results = from_bytes(data)
    best = results.best()
    if best is None:
        if b"\x00" in data:
            raise DatasetError("not_text", params={"kind": "unknown"})
        raise DatasetError("undecodable", params={"encoding": None})
    tied = [match for match in results if abs(match.chaos - best.chaos) < _TIE]
    for preferred in _PREFERRED:
        for match in tied:
            if preferred in match.could_be_from_charset:
                return preferred
    return best.encoding
