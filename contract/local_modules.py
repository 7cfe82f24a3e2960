"""A module metric.py imports that is the metric's own, not a library: a missing helper.

A metric pasted from a repository imports its helpers (`from src.evaluation import
eval_score`). When that file is not among the metric's helper files (contract.files), the
sandbox's import fails like any missing module; saying "the sandbox does not have it,
besides the standard library a metric may import: numpy, ..." would send the reader
looking for a library. So a missing module is told apart:

- a relative import (`from .evaluation import x`), or an absolute one whose top-level
  name is neither the standard library, nor a library of the sandbox
  (sandbox.libraries.AVAILABLE), nor a distribution known to be a library (the worker's
  own environment, `importlib.metadata.packages_distributions()`, and the well-known
  ones below), is a local module: "local_module_missing" {module, line};
- anything else keeps "module_not_available" (or the import error it was).

`refine_loaded(loaded, imports)` rewrites a judged "loaded" report (contract.frames) by
this rule, with the metric's source read in the parent (`Imports`), never trusting the
child beyond the module name and the line it reported.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import sys
from collections.abc import Iterable

from contract import files as helper_files
from contract import parsing
from sandbox.libraries import AVAILABLE

# Import names of libraries a metric may well import that the worker need not have
# installed: these are libraries (outside the sandbox's set), never a metric's own file.
WELL_KNOWN = frozenset(
    {
        "accelerate", "aiohttp", "anthropic", "attr", "attrs", "bert_score", "bleurt",
        "boto3", "bs4", "catboost", "chromadb", "cohere", "comet", "cv2", "datasets",
        "dateutil", "dill", "dotenv", "editdistance", "emoji", "evaluate", "faiss",
        "fireworks", "flax", "ftfy", "func_timeout", "fuzzywuzzy", "gensim", "gepa",
        "google", "groq", "guidance", "html2text", "httpx", "huggingface_hub", "inflect",
        "instructor", "jax", "jellyfish", "jieba", "joblib", "keras", "langchain",
        "langchain_core", "langchain_openai", "langdetect", "latex2sympy2", "Levenshtein",
        "lightgbm", "litellm", "llama_index", "lxml", "markdown", "math_verify",
        "matplotlib", "mauve", "mistralai", "mlflow", "networkx", "nltk", "num2words",
        "numba", "ollama", "openai", "orjson", "outlines", "peft", "PIL", "pinecone",
        "plotly", "polars", "pyarrow", "pycocoevalcap", "pylatexenc", "pymongo",
        "qdrant_client", "redis", "replicate", "requests", "rouge", "sacrebleu",
        "seaborn", "sentence_transformers", "sentencepiece", "spacy", "sqlalchemy",
        "sqlglot", "statsmodels", "tensorflow", "textdistance", "thefuzz", "tiktoken",
        "together", "tokenizers", "toml", "torch", "torchmetrics", "tqdm",
        "transformers", "trl", "ujson", "unidecode", "vertexai", "vllm", "wandb",
        "weave", "word2number", "xgboost", "z3",
    }
)  # fmt: skip

# Names some wheels install at the top level by mistake: a metric's own folder far more
# often than a library.
GENERIC = frozenset(
    {"app", "common", "core", "docs", "dummy", "examples", "helpers", "lib", "scripts",
     "src", "test", "tests", "utils"}
)  # fmt: skip

PROBLEM = "local_module_missing"
# The load problems that may be a missing local module.
_REFINED = ("module_not_available", "import_error")


@functools.lru_cache(maxsize=1)
def installed() -> frozenset[str]:
    """The top-level import names of the worker's own environment's distributions."""
    try:
        names = importlib.metadata.packages_distributions()
    except Exception:  # a broken distribution's metadata: then the lists above alone
        return frozenset()
    return frozenset(name for name in names if name.isidentifier()) - GENERIC


def is_library(name: str) -> bool:
    """Whether the top-level name of module `name` is a library rather than a metric's
    own module: the standard library, the sandbox's, skynet, or a known distribution."""
    top = name.split(".")[0]
    return (
        top in sys.stdlib_module_names
        or top in AVAILABLE
        or top == "skynet"
        or top in WELL_KNOWN
        or top in installed()
    )


class Imports:
    """What the parent reads of metric.py's imports, and the helper files' modules."""

    def __init__(self, tree: ast.Module | None, files: Iterable[str] = ()) -> None:
        self.by_line: dict[int, list[tuple[str, int]]] = {}
        if tree is not None:
            for module, level, line in helper_files.imported_modules(tree):
                self.by_line.setdefault(line, []).append((module, level))
        self.paths = list(files)
        self.tops = helper_files.top_names(self.paths)

    @classmethod
    def of(cls, text: str, files: Iterable[str] = ()) -> Imports:
        try:
            tree = parsing.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        return cls(tree, files)

    def is_local(self, name: str) -> bool:
        top = name.split(".")[0]
        return top in self.tops or not is_library(name)

    def missing(self, params: dict) -> dict | None:
        """{module, line} when a failed import of metric.py is a missing local module."""
        frames = params.get("traceback") or []
        line = frames[-1].get("line") if frames and isinstance(frames[-1], dict) else None
        statement = self.by_line.get(line, []) if type(line) is int else []
        absolute = [
            (helper_files.resolve(module, level, helper_files.METRIC), module, level)
            for module, level in statement
        ]
        module = params.get("module")
        if isinstance(module, str) and module:
            if not self.is_local(module):
                return None
            tops = {name.split(".")[0] for name, _m, _l in absolute if name}
            if (
                tops
                and module.split(".")[0] not in tops
                and not any(self.is_local(name) for name, _m, _l in absolute if name)
            ):
                # The statement imports a library, and the library itself missed a module.
                return None
            for name, _written, _level in absolute:
                if name == module or name.startswith(module + "."):
                    module = name  # as written: src.evaluation, not just src
                    break
            return {"module": module, "line": line}
        # metric.py is no package: its own relative import cannot find anything.
        if params.get("type") == "ImportError":
            for _name, written, level in absolute:
                if level > 0:
                    return {"module": "." * level + written, "line": line}
        return None


def refine_stage(stage: dict, imports: Imports) -> dict:
    """A judged load stage, with a missing local module said as one."""
    if stage.get("status") != "failed" or stage.get("problem") not in _REFINED:
        return stage
    params = stage.get("params") or {}
    found = imports.missing(params)
    if found is None:
        return stage
    kept = {k: v for k, v in params.items() if k not in ("available", "module")}
    new = {**kept, **found}
    return {
        **stage,
        "problem": PROBLEM,
        "params": new,
        "problems": [{"code": PROBLEM, "params": new}],
    }


def refine_loaded(loaded: dict, imports: Imports | None) -> dict:
    """A judged "loaded" report (contract.frames.judge_loaded) with its load stage refined."""
    if imports is None:
        return loaded
    stages = loaded.get("stages") or {}
    load = stages.get("load")
    if load is None:
        return loaded
    refined = refine_stage(load, imports)
    if refined is load:
        return loaded
    return {**loaded, "stages": {**stages, "load": refined}}
