"""skynet.wire: length-prefixed JSON frames."""

from __future__ import annotations

import socket

import pytest

from skynet import wire


def test_round_trip_over_a_socket():
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"type": "job", "text": "héllo ✓"})
        assert wire.recv(b) == {"type": "job", "text": "héllo ✓"}
        a.close()
        assert wire.recv(b) is None


def test_header_is_four_byte_big_endian_length():
    frame = wire.encode({"type": "x"})
    assert frame[:4] == (len(frame) - 4).to_bytes(4, "big")


def test_lone_surrogates_become_question_marks():
    frame = wire.encode({"type": "x", "s": "a\ud800b"})
    assert wire.decode_body(frame[4:]) == {"type": "x", "s": "a?b"}


def test_too_large_frames_are_refused_both_ways():
    with pytest.raises(wire.ProtocolError):
        wire.encode({"type": "x", "s": "a" * wire.MAX_FRAME})
    reader = wire.FrameReader()
    with pytest.raises(wire.ProtocolError):
        list(reader.feed((wire.MAX_FRAME + 1).to_bytes(4, "big")))


def test_nan_is_not_sent():
    with pytest.raises(ValueError):
        wire.encode({"type": "x", "v": float("nan")})


@pytest.mark.parametrize("body", [b"\xff", b"[1]", b'{"no": "type"}', b"{", b"[" * 100000])
def test_garbage_bodies_are_protocol_errors(body):
    with pytest.raises(wire.ProtocolError):
        wire.decode_body(body)


def test_reader_reassembles_split_frames_and_keeps_frames_before_garbage():
    data = wire.encode({"type": "a"}) + wire.encode({"type": "b"})
    reader = wire.FrameReader()
    got = []
    for i in range(len(data)):
        got += list(reader.feed(data[i : i + 1]))
    assert got == [{"type": "a"}, {"type": "b"}] and reader.pending == 0

    frames = reader.feed(wire.encode({"type": "c"}) + b"\x00\x00\x00\x01x")
    assert next(frames) == {"type": "c"}
    with pytest.raises(wire.ProtocolError):
        next(frames)
