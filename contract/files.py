"""A metric's helper modules: the `.py` files beside metric.py that it imports.

A metric pasted from a repository often imports a helper from another file of it
(`from src.evaluation import eval_score`). A metric version may carry such files as
`{path: text}`: a small tree of Python modules, importable in the sandbox as they are in
the repository (runtime/skynet/_helpers.py serves them, read-only, from the case's job).

`validate(pairs)` holds a set of files to the limits below and returns its problems as
codes and parameters (the "files" family of wording words them); `clean(pairs)` returns
the files as stored, or raises FilesRefused with the first problem. No Django here.
"""

from __future__ import annotations

import ast
import keyword
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from contract import parsing

MAX_FILES = 20
MAX_FILE_BYTES = 64 * 1024
# metric.py and every helper together.
MAX_TOTAL_BYTES = 512 * 1024
MAX_PATH_CHARS = 200
METRIC = "metric.py"

# Every code validate() can return, for the wording's completeness test.
PROBLEMS = (
    "too_many_files",
    "files_too_large",
    "file_path_empty",
    "file_path_too_long",
    "file_path_absolute",
    "file_path_parent",
    "file_path_not_python",
    "file_path_not_identifier",
    "file_path_is_metric",
    "file_path_duplicate",
    "file_module_clash",
    "file_not_text",
    "file_not_utf8",
    "file_too_large",
    "file_syntax_error",
)


@dataclass(frozen=True)
class Problem:
    code: str
    params: dict = field(default_factory=dict)


class FilesRefused(ValueError):
    """A set of helper files past a limit: the first problem found (and all of them)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems[0].code)
        self.problems = problems
        self.code = problems[0].code
        self.params = problems[0].params


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def path_problem(path: object) -> Problem | None:
    """Why `path` cannot name a helper module, or None: relative, `/`-separated, each
    part a Python identifier, ending in `.py`, and not metric.py itself."""
    if not isinstance(path, str) or not path.strip():
        return Problem("file_path_empty")
    if len(path) > MAX_PATH_CHARS:
        return Problem("file_path_too_long", {"path": path[:MAX_PATH_CHARS], "max": MAX_PATH_CHARS})
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return Problem("file_path_absolute", {"path": path})
    parts = path.split("/")
    if ".." in parts or ".." in path.split("\\"):
        return Problem("file_path_parent", {"path": path})
    if not path.endswith(".py"):
        return Problem("file_path_not_python", {"path": path})
    if path == METRIC:
        return Problem("file_path_is_metric", {"path": path})
    names = [*parts[:-1], parts[-1][: -len(".py")]]
    for name in names:
        if not name.isidentifier() or keyword.iskeyword(name):
            return Problem("file_path_not_identifier", {"path": path, "part": name})
    return None


def module_name(path: str) -> tuple[str, bool]:
    """(the dotted module a valid path is, whether it is a package's __init__)."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def packages(paths: Iterable[str]) -> set[str]:
    """Every dotted package (folder) the paths lie in: `src/a/b.py` gives src and src.a."""
    found = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            found.add(".".join(parts[:end]))
    return found


def modules(paths: Iterable[str]) -> set[str]:
    """Every dotted name the files make importable: their modules and their folders."""
    paths = list(paths)
    return {module_name(p)[0] for p in paths} | packages(paths)


def top_names(paths: Iterable[str]) -> set[str]:
    """The top-level names the files make importable (`src` for src/evaluation.py)."""
    return {name.split(".")[0] for name in modules(paths)}


def _text_problem(path: str, text: object) -> tuple[str | None, Problem | None]:
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, Problem("file_not_utf8", {"path": path, "byte": exc.start})
    if not isinstance(text, str):
        return None, Problem("file_not_text", {"path": path})
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None, Problem("file_not_utf8", {"path": path, "byte": None})
    if size > MAX_FILE_BYTES:
        return None, Problem(
            "file_too_large", {"path": path, "size": size, "limit": MAX_FILE_BYTES}
        )
    return text.removeprefix("\ufeff").replace("\r\n", "\n"), None


def _syntax_problem(path: str, text: str) -> Problem | None:
    try:
        parsing.parse(text)
    except SyntaxError as exc:
        return Problem(
            "file_syntax_error",
            {"path": path, "line": exc.lineno, "column": exc.offset, "msg": exc.msg or ""},
        )
    except (ValueError, RecursionError, MemoryError):
        return Problem("file_syntax_error", {"path": path, "line": None, "column": None, "msg": ""})
    return None


def validate(
    pairs: Iterable[tuple[object, object]] | Mapping, *, metric_bytes: int = 0
) -> tuple[dict[str, str], list[Problem]]:
    """(the files that passed, as stored, in path order; every problem found).

    `pairs`: (path, text) pairs (a mapping's items too), texts as str or UTF-8 bytes.
    `metric_bytes`: the size of metric.py, which counts towards MAX_TOTAL_BYTES.
    """
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    problems: list[Problem] = []
    if len(items) > MAX_FILES:
        problems.append(Problem("too_many_files", {"count": len(items), "max": MAX_FILES}))
    kept: dict[str, str] = {}
    module_of: dict[str, str] = {}
    total = metric_bytes
    for path, text in items:
        bad = path_problem(path)
        if bad is not None:
            problems.append(bad)
            continue
        assert isinstance(path, str)
        if path in kept:
            problems.append(Problem("file_path_duplicate", {"path": path}))
            continue
        name, _package = module_name(path)
        if name in module_of:
            problems.append(Problem("file_module_clash", {"path": path, "other": module_of[name]}))
            continue
        value, bad = _text_problem(path, text)
        if bad is not None:
            problems.append(bad)
            continue
        assert value is not None
        total += _size(value)
        bad = _syntax_problem(path, value)
        if bad is not None:
            problems.append(bad)
            continue
        module_of[name] = path
        kept[path] = value
    # A module whose name is also a folder of other files: `src.py` beside `src/a.py`.
    folders = packages(kept)
    for path in list(kept):
        name, is_package = module_name(path)
        if not is_package and name in folders:
            problems.append(
                Problem("file_module_clash", {"path": path, "other": name.replace(".", "/") + "/"})
            )
            del kept[path]
    if total > MAX_TOTAL_BYTES:
        problems.append(Problem("files_too_large", {"size": total, "limit": MAX_TOTAL_BYTES}))
    return dict(sorted(kept.items())), problems


def clean(
    pairs: Iterable[tuple[object, object]] | Mapping | None, *, metric_source: str = ""
) -> dict[str, str]:
    """The helper files as stored ({} for none); FilesRefused with every problem."""
    if not pairs:
        return {}
    kept, problems = validate(pairs, metric_bytes=_size(metric_source))
    if problems:
        raise FilesRefused(problems)
    return kept


def imported_modules(tree: ast.Module) -> list[tuple[str, int, int]]:
    """(module as written, level, line) of every import statement in `tree`: the module
    of an `import a.b` is a.b; of a `from .x import y` it is x, at level 1."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, 0, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level, node.lineno))
    return sorted(found, key=lambda item: item[2])


def resolve(module: str, level: int, importer: str) -> str:
    """The absolute name a relative import in the file `importer` (a path, "metric.py"
    for the metric) means; "" when it climbs above the top."""
    if level == 0:
        return module
    folder = posixpath.dirname(importer)
    parts = folder.split("/") if folder else []
    if level - 1 > len(parts):
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)
