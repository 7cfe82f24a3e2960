"""The contract check: does a user's metric.py honour the score() contract?

Django-free. The engine (contract.engine) reports codes and parameters only;
words are rendered later by a translation layer. The `skynet` runtime package
(runtime/skynet) is shared with the child processes, so make it importable.
"""

from __future__ import annotations

from contract.runtime_path import ensure_importable

ensure_importable()
