"""Where the sandbox runtime's files live: the folder the sandbox stages and runs.

The parent imports the same `skynet` package (installed from runtime/, see
runtime/pyproject.toml) to apply the same rules as the children.
"""

from __future__ import annotations

import os

RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime")
