"""Exit codes a CI job can act on."""

from __future__ import annotations

PASSED = 0
# The metric failed its check, an evaluation fell below --min-mean, a run failed.
FAILED = 1
# A wrong command line, a file that cannot be read, the server unreachable or refusing.
USAGE = 2
# Ctrl+C (as a shell says of SIGINT): the watching stopped; what was watched goes on on
# the server unless --cancel-on-interrupt was given.
INTERRUPTED = 130


class Stop(Exception):
    """Stop the command with `code`, after saying `message` (on stderr, or as JSON)."""

    def __init__(self, code: int, message: str, *, error: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.error = error
