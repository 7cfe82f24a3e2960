"""Printed output: the head is kept, cut at a line break or a space, and counted."""

from __future__ import annotations

from contract.capture import BoundedCapture


def test_output_within_the_limit_is_kept_whole():
    capture = BoundedCapture(limit=100)
    capture.feed(b"hello world\n")
    assert (capture.text(), capture.truncated, capture.printed) == ("hello world\n", 0, 12)


def test_a_cut_ends_at_the_last_line_break_then_space():
    capture = BoundedCapture(limit=20)
    capture.feed(b"first line\nsecond line goes on")
    assert capture.text() == "first line\n"
    assert (capture.truncated, capture.printed) == (19, 30)
    spaced = BoundedCapture(limit=12)
    spaced.feed(b"alpha beta gamma delta")
    assert spaced.text() == "alpha beta "


def test_a_cut_never_splits_a_character():
    capture = BoundedCapture(limit=10)
    capture.feed("aaaaaaaहह".encode())  # each ह is 3 bytes: the limit falls in the second
    assert capture.text() == "aaaaaaaह"
    assert capture.truncated == len("ह".encode())
