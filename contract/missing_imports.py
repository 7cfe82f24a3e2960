"""Names metric.py uses but never defines or imports, and the import lines that fix them.

A metric pasted from a notebook cell or cut out of a file usually comes without its import
lines, and fails at Load with a NameError (`dataclass`, `NamedTuple`, `dspy`, `np`). The
names are found by pyflakes, from the AST alone: nothing is executed. Each is resolved,
where it can be, to the import line that the standard library, the sandbox's libraries
(by their usual aliases), skynet, DSPy or gepa give it (`contract.import_names`).

`missing(tree)` lists them; `add_imports(text, lines)` puts the lines where a reader
expects them: after the module's docstring, `__future__` imports and leading imports.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from pyflakes import checker, messages

from contract.import_names import resolve
from contract.source import check_source

# At most this many names are reported (each also marks its line in the editor).
MAX_NAMES = 20


@dataclass(frozen=True)
class Missing:
    name: str
    line: int
    column: int  # 1-based characters
    end_column: int
    line_to_add: str  # "" when no import is known for the name
    framework: str  # "gepa" when the name is one of gepa's types (not in the sandbox)

    def params(self) -> dict:
        return {
            "name": self.name,
            "line": self.line,
            "column": self.column,
            "end_line": self.line,
            "end_column": self.end_column,
            "import": self.line_to_add,
            "framework": self.framework,
        }


def _uses(tree: ast.Module) -> dict[str, list[ast.Name]]:
    found: dict[str, list[ast.Name]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.setdefault(node.id, []).append(node)
    return found


def _attributes(tree: ast.Module, names: set[str]) -> dict[str, set[str] | None]:
    """For each name, the attributes read off it (`re.sub` → {"sub"}), or None when it
    is also used some other way (called, passed, subscripted)."""
    read: dict[str, set[str] | None] = {name: set() for name in names}
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in names):
            continue
        parent = parents.get(node)
        seen = read[node.id]
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if seen is not None:
                seen.add(parent.attr)
        else:
            read[node.id] = None
    return read


# A module using these may define names the AST does not show.
DYNAMIC_CALLS = frozenset({"globals", "exec", "setattr", "vars", "__import__"})


def is_dynamic(tree: ast.Module) -> bool:
    """A module that may define names the AST does not show: a star import, or a call to
    globals(), exec() and the like. Its names are not guessed at."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in DYNAMIC_CALLS
        ):
            return True
    return False


def missing(tree: ast.Module, text: str) -> list[Missing]:
    """The names used but never bound, each at its first use, in the order they appear."""
    if is_dynamic(tree):
        return []
    try:
        report = checker.Checker(tree, filename="metric.py")
    except (RecursionError, MemoryError):
        return []
    first: dict[str, tuple[int, int]] = {}
    for message in report.messages:
        if type(message) is messages.UndefinedName:
            name = message.message_args[0]
            where = (message.lineno, message.col)
            if name not in first or where < first[name]:
                first[name] = where
    if not first:
        return []
    names = sorted(first, key=lambda n: first[n])[:MAX_NAMES]
    attributes = _attributes(tree, set(names))
    lines = re.split(r"\r\n|\r|\n", text)
    found = []
    for name in names:
        line, col = first[name]
        # pyflakes gives the AST's column: UTF-8 bytes of the line.
        before = lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace")
        line_to_add, framework = resolve(name, attributes.get(name))
        found.append(
            Missing(
                name=name,
                line=line,
                column=len(before) + 1,
                end_column=len(before) + 1 + len(name),
                line_to_add=line_to_add,
                framework=framework,
            )
        )
    return found


def import_block(lines_to_add: list[str]) -> list[str]:
    """The import lines, merged per module and ordered: `import x` lines first, then
    `from x import a, b`, each group sorted."""
    plain: set[str] = set()
    froms: dict[str, set[str]] = {}
    for line in lines_to_add:
        if line.startswith("from "):
            module, _, names = line[len("from ") :].partition(" import ")
            froms.setdefault(module, set()).update(n.strip() for n in names.split(","))
        elif line:
            plain.add(line)
    block = sorted(plain)
    block += [
        f"from {module} import {', '.join(sorted(froms[module]))}" for module in sorted(froms)
    ]
    return block


def _insert_at(tree: ast.Module) -> int:
    """The 0-based line index before which imports go: after a docstring, and after the
    imports at the top of the module."""
    at = 0
    for index, statement in enumerate(tree.body):
        docstring = (
            index == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        )
        if docstring or isinstance(statement, ast.Import | ast.ImportFrom):
            at = statement.end_lineno or statement.lineno
            continue
        break
    return at


def add_imports(text: str, tree: ast.Module, lines_to_add: list[str]) -> tuple[str, int]:
    """`text` with the import lines added, and the 1-based line the first one is on."""
    block = import_block(lines_to_add)
    if not block:
        return text, 0
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    at = _insert_at(tree)
    if at == 0:
        at = _after_header(lines, tree)
    if at and at <= len(lines) and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += newline
    added = [line + newline for line in block]
    joins = _imports_before(tree, at)  # the lines join the module's own imports
    if at and not joins:
        added.insert(0, newline)  # after a docstring
    after = lines[at] if at < len(lines) else ""
    if after.strip() and not joins:
        added.append(newline)
    first = at + 1 + (1 if at and not joins else 0)
    return "".join(lines[:at] + added + lines[at:]), first


def _after_header(lines: list[str], tree: ast.Module) -> int:
    """In a module that opens with neither a docstring nor imports: after the comment
    block at its top when a blank line parts it from the code (a file's header, a
    shebang), else at the very top."""
    first = tree.body[0].lineno - 1 if tree.body else len(lines)
    for index in range(min(first, len(lines))):
        if not lines[index].strip():
            return index
    return 0


def _imports_before(tree: ast.Module, at: int) -> bool:
    """Whether the line before `at` ends an import (the new ones then join that block)."""
    return any(
        isinstance(s, ast.Import | ast.ImportFrom) and (s.end_lineno or s.lineno) == at
        for s in tree.body
    )


@dataclass(frozen=True)
class Fixed:
    source: str  # the text with the import lines added (unchanged when none could be)
    added: list[str]  # the lines added, as written
    line: int  # the 1-based line the first added line is on; 0 when none was added
    left: list[str]  # names still missing: no import is known for them
    problem: str | None = None  # the text's own load problem (too large, not UTF-8, syntax)
    params: dict | None = None  # and its params


def fix(source: bytes | str) -> Fixed:
    """Add the import line of every missing name that has one: the panel's "Add the
    missing imports", the API's and `skynet check --add-imports`'s."""
    checked = check_source(source)
    if checked.problem is not None or checked.tree is None or checked.text is None:
        text = source if isinstance(source, str) else ""
        return Fixed(text, [], 0, [], checked.problem or "syntax_error", checked.params)
    found = missing(checked.tree, checked.text)
    lines = [m.line_to_add for m in found if m.line_to_add]
    left = [m.name for m in found if not m.line_to_add]
    text, line = add_imports(checked.text, checked.tree, lines)
    return Fixed(text, import_block(lines), line, left)
