"""Long data set aside while a metric is converted, and put back word for word after.

The converter's passes walk every node of a libcst tree, several times, so a metric.py
followed by a list of 20,000 numbers cost seconds for nodes no pass ever changes. Such a
literal holds no name, so no decision of the converter can depend on it: before the tree
is made, each one (a list, tuple, set or dict of constants only, with many elements) is
replaced by a string placeholder over the same lines, and its text is put back after.

Literals a `return` gives are left in place: the converter reads what a metric returns.
"""

from __future__ import annotations

import ast
import re
import secrets

# A literal is set aside from this many constants in it: below it, the saving is nothing.
MIN_CONSTANTS = 64

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_NEWLINE = re.compile(rb"\r\n|\r|\n")


def elide(source: str) -> tuple[str, dict[str, str]]:
    """`source` with its long constant literals replaced by placeholders, and what each
    placeholder stands for. The result has the same lines as the source: a placeholder
    keeps its literal's line breaks, so every line number the converter gives holds."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source, {}  # the converter's own parse says why
    spans = [_span(node) for node in _literals(tree)]
    if not spans:
        return source, {}
    data = source.encode("utf-8", "surrogatepass")
    starts = [0] + [match.end() for match in _NEWLINE.finditer(data)]
    stem = _unused_stem(source)
    pieces: list[bytes] = []
    taken: dict[str, str] = {}
    at = 0
    for index, (first, first_col, last, last_col) in enumerate(sorted(spans)):
        begin = starts[first - 1] + first_col
        end = starts[last - 1] + last_col
        if begin < at:  # nested in one already set aside (cannot happen: not descended)
            continue
        text = data[begin:end]
        name = f"{stem}{index}__"
        breaks = len(_NEWLINE.findall(text))
        placeholder = f'("{name}"' + "\n" * breaks + ")"
        pieces += [data[at:begin], placeholder.encode()]
        taken[f'"{name}"'] = text.decode("utf-8", "surrogatepass")
        at = end
    pieces.append(data[at:])
    return b"".join(pieces).decode("utf-8", "surrogatepass"), taken


def restore(converted: str, taken: dict[str, str]) -> str | None:
    """The converted text with each literal put back; None when a placeholder is not
    where it can be put back whole (then convert the source as it is)."""
    for quoted, text in taken.items():
        count = converted.count(quoted)
        if count == 0:
            continue  # the code that held it was removed
        if count > 1:
            return None
        pattern = re.compile(r"\(" + re.escape(quoted) + r"\s*\)")
        found = pattern.findall(converted)
        if len(found) != 1:
            return None
        converted = converted.replace(found[0], text, 1)
    return converted


def _literals(tree: ast.AST):
    """The long constant literals, outermost first, none inside a return's value."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.JoinedStr):
            continue
        if isinstance(node, _CONTAINERS):
            count = _constants(node)
            if count >= MIN_CONSTANTS:
                yield node
                continue
        stack.extend(ast.iter_child_nodes(node))


def _constants(node: ast.AST) -> int:
    """How many constants a literal holds; -1 when anything in it is not a constant."""
    total = 0
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Constant):
            total += 1
        elif isinstance(item, ast.UnaryOp) and isinstance(item.operand, ast.Constant):
            total += 1  # -1, +2.5
        elif isinstance(item, _CONTAINERS):
            if isinstance(item, ast.Dict):
                if any(key is None for key in item.keys):  # {**other}
                    return -1
                stack.extend(item.keys)  # type: ignore[arg-type]
                stack.extend(item.values)
            else:
                stack.extend(item.elts)
        else:
            return -1
    return total


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined,return-value]


def _unused_stem(source: str) -> str:
    while True:
        stem = f"__skynet_elided_{secrets.token_hex(4)}_"
        if stem not in source:
            return stem
