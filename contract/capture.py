"""Keep the head of a child's output stream, counting what did not fit."""

from __future__ import annotations

OUTPUT_LIMIT = 64 * 1024
# When output is cut, it ends at the last line break, else the last space, found in
# this many bytes before the limit, so the kept text does not stop mid-line or mid-word.
BOUNDARY_WINDOW = 1024


class BoundedCapture:
    """The first `limit` bytes of a stream; `printed` counts every byte received and
    `truncated` those not kept (`printed` - kept)."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self._data = bytearray()
        self.printed = 0

    def feed(self, chunk: bytes) -> None:
        room = max(0, self.limit - len(self._data))
        self._data += chunk[:room]
        self.printed += len(chunk)

    def _kept(self) -> bytes:
        data = bytes(self._data)
        if self.printed <= len(data):
            return data
        window = data[-BOUNDARY_WINDOW:]
        start = len(data) - len(window)
        for mark in (b"\n", b" "):
            at = window.rfind(mark)
            if at >= 0:
                return data[: start + at + 1]
        # No break in sight: end before a character the limit cut in two.
        last = len(data) - 1
        while last > 0 and len(data) - last < 4 and data[last] & 0xC0 == 0x80:
            last -= 1
        lead = data[last]
        size = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        return data[:last] if last + size > len(data) else data

    @property
    def truncated(self) -> int:
        """Bytes received but not kept: past the limit, or cut back to a boundary."""
        return self.printed - len(self._kept())

    def text(self) -> str:
        # The metric may print anything; invalid UTF-8 becomes U+FFFD.
        return self._kept().decode("utf-8", "replace")
