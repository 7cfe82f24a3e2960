"""contract.storable: NUL and lone surrogates become U+FFFD, one character for one."""

from __future__ import annotations

from contract.results import CaseResult
from contract.storable import storable, storable_text


def test_each_unstorable_character_becomes_one_replacement_character():
    text = "a\x00b\ud800c\udfffd"
    assert storable_text(text) == "a\ufffdb\ufffdc\ufffdd"
    assert len(storable_text(text)) == len(text)
    assert storable_text("plain é 😀") == "plain é 😀"
    # What the cleaned text is encoded to is what PostgreSQL and every driver accept.
    storable_text(text).encode("utf-8")


def test_every_string_inside_is_cleaned_keys_too_and_other_values_kept():
    value = {"k\x00": ["x\ud800", ("\x00", 1)], "n": None, "f": 0.5, "b": True, "bytes": b"\x00"}
    assert storable(value) == {
        "k\ufffd": ["x\ufffd", ("\ufffd", 1)],
        "n": None,
        "f": 0.5,
        "b": True,
        "bytes": b"\x00",
    }
    row = storable(CaseResult(index=0, feedback="f\x00", scores={"s\x00": 1.0}, stdout="o\x00"))
    assert (row.feedback, row.scores, row.stdout) == ("f\ufffd", {"s\ufffd": 1.0}, "o\ufffd")
