"""Keep the head of a child's output stream, counting what did not fit."""

from __future__ import annotations

OUTPUT_LIMIT = 64 * 1024


class BoundedCapture:
    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self._data = bytearray()
        self.truncated = 0  # bytes received past the limit and dropped

    def feed(self, chunk: bytes) -> None:
        room = max(0, self.limit - len(self._data))
        self._data += chunk[:room]
        self.truncated += max(0, len(chunk) - room)

    def text(self) -> str:
        # The metric may print anything; a character cut at the limit becomes U+FFFD.
        return self._data.decode("utf-8", "replace")
