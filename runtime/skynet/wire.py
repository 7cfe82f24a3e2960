"""Length-prefixed JSON frames between the runner (parent) and the child.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON
holding one object with a string "type". Both sides share this module so the
format cannot drift.
"""

from __future__ import annotations

import array
import json
import socket
import struct
from collections.abc import Iterator

# Bound here, at import, so a metric that monkeypatches json or struct after
# loading cannot break how the child reports its result.
_dumps = json.dumps
_loads = json.loads
_HEADER = struct.Struct(">I")

# Largest frame the parent accepts from a child: a result or a run's output described
# within skynet.values' budgets (at most 2M characters, escaped), with a DSPy program's
# part (at most skynet.dspy_part.PART_LIMIT characters more) fits. It bounds what one
# frame costs the worker before contract.frames holds each field to the child's limits.
MAX_FRAME = 16 << 20
# An llm() request: the provider's budget check refuses large prompts anyway.
MAX_REQUEST_FRAME = 1 << 20
# The job frame carries the source (up to 256 KB, more once JSON-escaped), the case
# data and a run's output, so the child accepts a larger one from the trusted parent.
MAX_JOB_FRAME = 32 << 20


class ProtocolError(Exception):
    """A frame that is too large, truncated or not a JSON object with a type."""


# An "llm" frame carries either "instructions" and "input" (skynet.llm()) or "messages", a
# conversation (DSPy's LM in a metric, skynet._dspy_metric): a non-empty list of
# {"role", "content"} with a role of CHAT_ROLES and text content. The parent hands a
# handler both: the messages, and the same conversation as one text in "instructions".
CHAT_ROLES = ("system", "user", "assistant")
MAX_CHAT_MESSAGES = 256


def chat_messages(value: object) -> list[dict] | None:
    """`value` as a conversation ([{"role", "content"}], only those keys), or None when it
    is not one."""
    if not isinstance(value, list) or not 0 < len(value) <= MAX_CHAT_MESSAGES:
        return None
    messages = []
    for item in value:
        if not isinstance(item, dict):
            return None
        role, content = item.get("role"), item.get("content")
        if role not in CHAT_ROLES or not isinstance(content, str):
            return None
        messages.append({"role": role, "content": content})
    return messages


def chat_text(messages: list[dict]) -> str:
    """A conversation as one text, for whoever reads only instructions: the system
    messages' texts, then a lone user message as it is, or each message after its role."""
    parts = [m["content"] for m in messages if m["role"] == "system"]
    turns = [m for m in messages if m["role"] != "system"]
    if len(turns) == 1 and turns[0]["role"] == "user":
        parts.append(turns[0]["content"])
    else:
        parts.extend(f"[{m['role']}]\n{m['content']}" for m in turns)
    return "\n\n".join(parts)


def encode(obj: dict, *, limit: int = MAX_FRAME) -> bytes:
    """Return the framed bytes for `obj`; raise ProtocolError when too large.

    Lone surrogates (legal in Python str, illegal in UTF-8) are replaced by
    "?" so any text the metric produced can cross the wire.
    """
    text = _dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    body = text.encode("utf-8", "replace")
    if len(body) > limit:
        raise ProtocolError("frame_too_large")
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict:
    """Parse one frame body; raise ProtocolError unless it is an object with a type."""
    try:
        obj = _loads(body.decode("utf-8"))
    except Exception as exc:  # bad UTF-8, bad JSON, or nesting deep enough to recurse out
        raise ProtocolError("bad_frame") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError("bad_frame")
    return obj


def send(sock: socket.socket, obj: dict, *, limit: int = MAX_FRAME) -> None:
    """Send one frame on a blocking socket."""
    sock.sendall(encode(obj, limit=limit))


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 16))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def recv(sock: socket.socket, *, limit: int = MAX_FRAME) -> dict | None:
    """Read one frame from a blocking socket; None on a clean end of stream."""
    header = _recv_exactly(sock, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > limit:
        raise ProtocolError("frame_too_large")
    body = _recv_exactly(sock, size)
    if body is None:
        raise ProtocolError("truncated_frame")
    return decode_body(body)


def recv_with_ancillary(
    sock: socket.socket, ancillary_size: int, *, limit: int = MAX_FRAME
) -> tuple[dict | None, list[tuple[int, int, bytes]]]:
    """Read one frame and the ancillary data (descriptors, credentials) that came with
    its first bytes; (None, ancillary) on a clean end of stream."""
    header, ancillary, _flags, _addr = sock.recvmsg(_HEADER.size, ancillary_size)
    if not header:
        return None, ancillary
    rest = _recv_exactly(sock, _HEADER.size - len(header)) if len(header) < _HEADER.size else b""
    if rest is None:
        raise ProtocolError("truncated_frame")
    (size,) = _HEADER.unpack(header + rest)
    if size > limit:
        raise ProtocolError("frame_too_large")
    body = _recv_exactly(sock, size)
    if body is None:
        raise ProtocolError("truncated_frame")
    return decode_body(body), ancillary


def descriptors(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The file descriptors (SCM_RIGHTS) among recvmsg's ancillary data."""
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return list(fds)


class FrameReader:
    """Incremental decoder for a non-blocking reader: feed bytes, get whole frames."""

    def __init__(self, *, limit: int = MAX_FRAME) -> None:
        self._limit = limit
        self._buffer = bytearray()

    def feed(self, data: bytes) -> Iterator[dict]:
        """Yield each complete frame in order; raise ProtocolError at the first bad one.

        A generator, so frames before a bad one are still handled (a "loaded"
        frame followed by garbage in the same read must not be lost).
        """
        self._buffer += data
        while len(self._buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buffer)
            if size > self._limit:
                raise ProtocolError("frame_too_large")
            end = _HEADER.size + size
            if len(self._buffer) < end:
                return
            body = bytes(self._buffer[_HEADER.size : end])
            del self._buffer[:end]
            yield decode_body(body)

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered (non-zero at EOF means truncation)."""
        return len(self._buffer)
