"""Where the child runtime lives, and making its `skynet` package importable here.

The parent reuses skynet.returns / rewardspec / signature / wire so both sides
apply the same rules. pytest already puts runtime/ on sys.path; other entry
points (Django, Celery) get it from here.
"""

from __future__ import annotations

import os
import sys

RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime")


def ensure_importable() -> None:
    if not any(os.path.abspath(p or ".") == RUNTIME_DIR for p in sys.path):
        sys.path.append(RUNTIME_DIR)
