"""The import line for a name a metric uses without importing it.

Only what is unambiguous is resolved: the standard library's modules and its well-known
names (`dataclass`, `NamedTuple`, `Counter`…), the sandbox's libraries by their usual
aliases (`np`, `pd`, `fuzz`…), skynet's helpers and DSPy's types. gepa's types are named
as gepa's: the sandbox has no gepa, and Convert rewrites the returns they shape.
"""

from __future__ import annotations

import sys
import typing

from sandbox.libraries import AVAILABLE

SKYNET = frozenset({"llm", "reward", "observation", "service_cost"})

# A module's usual alias in published metrics.
ALIASES = {
    "np": "import numpy as np",
    "pd": "import pandas as pd",
    "fuzz": "from rapidfuzz import fuzz",
    "rouge_scorer": "from rouge_score import rouge_scorer",
    "stats": "from scipy import stats",
    "DeepDiff": "from deepdiff import DeepDiff",
    "BaseModel": "from pydantic import BaseModel",
    "Field": "from pydantic import Field",
    "ValidationError": "from pydantic import ValidationError",
    "sent_tokenize": "from nltk.tokenize import sent_tokenize",
    "word_tokenize": "from nltk.tokenize import word_tokenize",
}

# Names of the standard library's modules that published metrics import by name.
_FROM: dict[str, tuple[str, ...]] = {
    "dataclasses": ("dataclass", "field", "asdict", "astuple", "fields"),
    "collections": ("Counter", "defaultdict", "OrderedDict", "deque", "namedtuple", "ChainMap"),
    "enum": ("Enum", "IntEnum", "StrEnum", "Flag"),
    "functools": ("lru_cache", "partial", "reduce", "cache", "cached_property", "wraps"),
    "itertools": ("chain", "groupby", "combinations", "permutations", "zip_longest", "islice"),
    "difflib": ("SequenceMatcher", "get_close_matches", "unified_diff", "ndiff"),
    "fractions": ("Fraction",),
    "decimal": ("Decimal", "InvalidOperation"),
    "pathlib": ("Path",),
    "pprint": ("pprint",),
    "ast": ("literal_eval",),
    "copy": ("deepcopy",),
    "datetime": ("date", "timedelta", "timezone"),
    "string": ("punctuation", "ascii_lowercase", "ascii_uppercase", "digits", "whitespace"),
    "math": ("isclose", "isfinite", "isnan"),
    # DSPy's types: a converted metric no longer needs them where they shaped the return.
    "dspy": ("Example", "Prediction", "Signature", "InputField", "OutputField", "Module"),
    "dspy.teleprompt.gepa.gepa": ("ScoreWithFeedback", "GEPAFeedbackMetric", "DSPyTrace"),
    "dspy.primitives": ("Example", "Prediction"),
}
FROM: dict[str, str] = {}
for _module, _names in _FROM.items():
    for _name in _names:
        FROM.setdefault(_name, _module)
for _name in typing.__all__:
    if _name[:1].isupper() or _name in ("cast", "overload", "final", "get_args", "get_origin"):
        FROM.setdefault(_name, "typing")

# gepa's own types, as published examples use them unimported.
GEPA_TYPES = frozenset(
    {
        "EvaluationBatch",
        "EvaluationResult",
        "DefaultDataInst",
        "GEPAAdapter",
        "GEPAResult",
        "ContainsAnswerEvaluator",
    }
)

MODULES = (
    frozenset(name for name in sys.stdlib_module_names if not name.startswith("_"))
    | frozenset(AVAILABLE)
    | {"skynet"}
)
# datetime is a module and its class: these are the class's.
_DATETIME_CLASS = frozenset(
    {"now", "utcnow", "today", "strptime", "fromisoformat", "fromtimestamp", "combine"}
)


def resolve(name: str, attributes: set[str] | None) -> tuple[str, str]:
    """(the import line, or "" when none is known; "gepa" for gepa's types, else "").

    `attributes` are the attributes the metric reads off the name (`re.sub` → {"sub"}),
    None when it also uses the name another way (calls it, passes it)."""
    if name in SKYNET:
        return f"from skynet import {name}", ""
    if name in GEPA_TYPES or name == "gepa":
        return "", "gepa"
    if name == "datetime" and attributes and attributes <= _DATETIME_CLASS:
        return "from datetime import datetime", ""
    if name in MODULES and attributes is not None:
        return f"import {name}", ""
    if name in ALIASES:
        return ALIASES[name], ""
    if name in FROM:
        return f"from {FROM[name]} import {name}", ""
    if name in MODULES:
        return f"import {name}", ""
    return "", ""
