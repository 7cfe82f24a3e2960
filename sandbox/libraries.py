"""The packages a metric may import in its sandbox, besides the standard library.

This is the one list: the worker stages these distributions (with what they need, see
sandbox.site) read-only into every sandbox, and a metric that imports anything
else fails at Load with "module_not_available", naming the module and this set. Their
versions are pinned in requirements.txt.
"""

from __future__ import annotations

# (distribution, import name), in the order the docs list them.
LIBRARIES: tuple[tuple[str, str], ...] = (
    ("numpy", "numpy"),
    ("scipy", "scipy"),
    ("pandas", "pandas"),
    ("scikit-learn", "sklearn"),
    ("sympy", "sympy"),
    ("rapidfuzz", "rapidfuzz"),
    ("nltk", "nltk"),
    ("rouge-score", "rouge_score"),
    ("regex", "regex"),
    ("jsonschema", "jsonschema"),
    ("pydantic", "pydantic"),
    ("PyYAML", "yaml"),
    ("deepdiff", "deepdiff"),
    ("sqlparse", "sqlparse"),
    ("dspy", "dspy"),
)

DISTRIBUTIONS: tuple[str, ...] = tuple(dist for dist, _ in LIBRARIES)
# What a metric writes after `import`: the names a Load problem lists.
AVAILABLE: tuple[str, ...] = tuple(name for _, name in LIBRARIES)
# Imported by every warm sandbox before it forks a case (runtime/skynet_warm.py), so a
# metric that imports them pays nothing per case; cheap and the most common.
PRELOAD: tuple[str, ...] = ("numpy", "rapidfuzz")
# dspy is staged by what a program loads (its declared requirements bring litellm and API
# clients no sandbox needs), the others whole with their declared requirements.
PROBED = ("dspy",)


def load_problem(params: dict) -> tuple[str, dict] | None:
    """The Load problem for a metric whose import failed on a missing top-level module
    (`params["module"]`, reported by the child), or None to keep "import_error": a
    documented library that is missing means the worker could not stage it, and one the
    child refused (runtime/skynet/_memory.py) needs more memory than each process has."""
    module = params.get("module")
    if not isinstance(module, str) or not module or "." in module:
        return None  # a submodule of a package that is there: the import's own error
    needed, memory = params.get("needed_mb"), params.get("memory_mb")
    if type(needed) is int and type(memory) is int:
        return "library_needs_memory", {"module": module, "needed_mb": needed, "memory_mb": memory}
    if module in AVAILABLE:
        return "library_unavailable", {"module": module}
    return "module_not_available", {"module": module, "available": list(AVAILABLE)}
