"""The prompt of a judge metric: the module-level string constant its llm() call sends, found
and rewritten in place.

A metric that asks a model to judge (a "judge") usually keeps its instructions in one
constant, `JUDGE_PROMPT = \"\"\"...\"\"\"`. Aligning the judge with people (the alignment app)
lets GEPA rewrite that text, then saves the best one as a new version of the metric: the
same file with only that string literal changed. So the constant must be a plain string
literal assigned once at module level (an f-string, a concatenation or a second assignment
would leave the text the model gets somewhere else), and the rewrite must keep everything
around it byte for byte: libcst keeps every comment, blank line and quote as written.

Finding reads the file with `ast` (a results page asks it of every judge it shows, and
`ast` reads 60 KB in tens of milliseconds where libcst's scope analysis takes seconds);
rewriting, asked once per alignment, parses it with libcst and changes the one node.

Which constant: among the UPPER_CASE module-level strings, those named in an llm() call's
arguments; else those the code reads anywhere; the longest of them. What was found, or why
nothing was (a code of REFUSALS, with params), is data: the app words it.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

# Why a source has no prompt to align (params in brackets):
REFUSALS = (
    "syntax_error",  # metric.py does not parse {line}
    "no_llm_call",  # it never calls llm(): it asks no model
    "no_prompt_constant",  # no UPPER_CASE string constant that the code reads
    "f_string",  # {name} is an f-string: its text is made when it runs
    "concatenated",  # {name} is made of several strings joined
    "not_text",  # {name} is bytes, not text
    "assigned_again",  # {name} is assigned more than once
    "several_targets",  # {name} is assigned together with other names (A = B = "...")
)
# A constant's name as the house writes them: upper case, digits and underscores.
CONSTANT_NAME = re.compile(r"_*[A-Z][A-Z0-9_]*")
# Characters written escaped in a new literal: control characters (but a newline and a
# tab in a triple-quoted one), surrogates and the line and paragraph separators, which a
# reader cannot see and a tool may take for a line break.
_ESCAPED_CATEGORIES = ("Cc", "Cs", "Zl", "Zp")


@dataclass(frozen=True)
class JudgePrompt:
    """The constant found: its name, its text, and where its literal is (lines 1-based,
    columns 0-based, as an editor counts them)."""

    name: str
    value: str
    line: int
    column: int
    end_line: int
    end_column: int
    # The literal's quote (', ", ''' or \"\"\") and prefix ("", "r", "u" ...).
    quote: str
    prefix: str

    @property
    def first_lines(self) -> list[str]:
        return self.value.splitlines()[:5]


@dataclass(frozen=True)
class NoPrompt:
    """Why there is no prompt to align: a code of REFUSALS and its params."""

    code: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Constant:
    name: str
    node: ast.expr
    problem: str | None  # a code of REFUSALS, or None for a plain string literal


def find_judge_prompt(source: str) -> JudgePrompt | NoPrompt:
    """The constant `source`'s judge prompt is, or why there is none."""
    parsed = _parse(source)
    if isinstance(parsed, NoPrompt):
        return parsed
    return parsed.judge_prompt()


def find_constant(source: str, name: str) -> JudgePrompt | NoPrompt:
    """The constant `name` of `source` as find_judge_prompt reads constants (an accepted
    prompt is written back into the constant the alignment started from)."""
    parsed = _parse(source)
    if isinstance(parsed, NoPrompt):
        return parsed
    constant = parsed.constants().get(name)
    if constant is None:
        return NoPrompt("no_prompt_constant", {"name": name})
    return parsed.found(constant)


def calls_llm(source: str) -> bool:
    """Whether `source` parses and calls llm() (skynet.llm or llm imported from it)."""
    parsed = _parse(source)
    return not isinstance(parsed, NoPrompt) and bool(parsed.calls)


def replace_prompt(source: str, name: str, text: str) -> str:
    """`source` with only constant `name`'s string literal replaced by one whose value is
    `text`, in the same quotes where they can hold it; ValueError (a NoPrompt's code) when
    `source` has no such constant."""
    return _replaced(
        source,
        name,
        lambda found, node: node.with_changes(
            value=string_literal(text, found.quote, found.prefix)
        ),
    )


def replace_with_name(source: str, name: str, expression: str) -> str:
    """`source` with constant `name`'s string literal replaced by the name `expression`:
    the constant then takes its value from wherever the code that runs it defines that
    name (the program of an alignment sets it to the artifact GEPA proposes)."""
    if not expression.isidentifier():
        raise ValueError("not_an_identifier")
    return _replaced(
        source, name, lambda found, node: cst.Name(expression, lpar=node.lpar, rpar=node.rpar)
    )


def string_literal(text: str, quote: str = '"""', prefix: str = "") -> str:
    """A Python string literal whose value is `text`: in `quote`'s style (' or ", triple
    when `quote` is or when `text` spans lines), raw when `prefix` was and `text` can be
    written raw, escaped where it must be. It always reads back as `text`."""
    char = '"' if '"' in quote else "'"
    triple = len(quote) == 3 or "\n" in text
    if "r" in prefix.lower():
        raw = _raw(text, char, triple)
        if raw is not None:
            return raw
    delimiter = char * 3 if triple else char
    literal = delimiter + _escaped(text, char, triple) + delimiter
    if _reads_back(literal, text):
        return literal
    return repr(text)  # never reached for text a str can hold; kept as the safe answer


# -- finding ------------------------------------------------------------------------

# Lines as the parser counts them: \n, \r\n and \r end a line (str.splitlines would also
# split at characters such as \x0c that a string literal may hold).
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def source_lines(source: str) -> list[str]:
    """`source`'s lines as Python numbers them, each with its line end."""
    lines, start = [], 0
    for end in _LINE_ENDS.finditer(source):
        lines.append(source[start : end.end()])
        start = end.end()
    lines.append(source[start:])
    return lines


class _Module:
    def __init__(self, source: str, tree: ast.Module) -> None:
        self.source = source
        self.tree = tree
        self.lines = source_lines(source)
        self.calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "llm")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "llm")
            )
        ]

    def constants(self) -> dict[str, _Constant]:
        """Every UPPER_CASE name assigned a string-like value at module level, in order."""
        bindings = _module_bindings(self.tree)
        found: dict[str, _Constant] = {}
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            else:
                continue
            problem = self._value_problem(value)
            if problem == "not_a_string":
                continue
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                name = target.id
                if not CONSTANT_NAME.fullmatch(name) or name in found:
                    continue
                if len(targets) > 1:
                    problem = problem or "several_targets"
                if bindings[name] > 1:
                    problem = problem or "assigned_again"
                found[name] = _Constant(name, value, problem)
        return found

    def _value_problem(self, value: ast.expr) -> str | None:
        """None for a plain string literal; why another string-like value is not one; or
        "not_a_string" for a value that is no string at all (a number, a dict)."""
        if isinstance(value, ast.Constant) and isinstance(value.value, str | bytes):
            if isinstance(value.value, bytes):
                return "not_text"
            # ast joins "a" "b" into one constant: its tokens tell.
            return "concatenated" if self._string_tokens(value) > 1 else None
        if isinstance(value, ast.JoinedStr):
            return "f_string"
        if isinstance(value, ast.BinOp) and any(
            isinstance(node, ast.JoinedStr)
            or (isinstance(node, ast.Constant) and isinstance(node.value, str))
            for node in ast.walk(value)
        ):
            return "concatenated"
        return "not_a_string"

    def _segment(self, node: ast.expr) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def _string_tokens(self, node: ast.expr) -> int:
        try:
            tokens = tokenize.generate_tokens(io.StringIO(self._segment(node)).readline)
            return sum(token.type == tokenize.STRING for token in tokens)
        except (tokenize.TokenError, SyntaxError):
            return 1

    def _column(self, line: int, offset: int) -> int:
        """A column in characters, from the parser's (in UTF-8 bytes)."""
        return len(self.lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))

    def _reads(self) -> list[str]:
        """The names the code reads, in the order of their first read."""
        reads: dict[str, tuple[int, int]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                here = (node.lineno, node.col_offset)
                reads[node.id] = min(reads.get(node.id, here), here)
        return sorted(reads, key=reads.__getitem__)

    def _names_in_calls(self) -> list[str]:
        names: dict[str, None] = {}
        for call in self.calls:
            for argument in [*call.args, *(keyword.value for keyword in call.keywords)]:
                for node in ast.walk(argument):
                    if isinstance(node, ast.Name):
                        names.setdefault(node.id)
        return list(names)

    def judge_prompt(self) -> JudgePrompt | NoPrompt:
        if not self.calls:
            return NoPrompt("no_llm_call")
        constants = self.constants()
        read = self._reads()
        in_calls = [n for n in self._names_in_calls() if n in constants and n in read]
        named = in_calls or [n for n in read if n in constants]
        usable = [constants[n] for n in named if constants[n].problem is None]
        if usable:
            # The longest text; the first named among equals.
            best = max(usable, key=lambda c: len(c.node.value))  # type: ignore[attr-defined]
            return self.found(best)
        if named:
            first = constants[named[0]]
            return NoPrompt(first.problem or "no_prompt_constant", {"name": first.name})
        return NoPrompt("no_prompt_constant")

    def found(self, constant: _Constant) -> JudgePrompt | NoPrompt:
        if constant.problem is not None:
            return NoPrompt(constant.problem, {"name": constant.name})
        node = constant.node
        assert isinstance(node, ast.Constant) and isinstance(node.value, str)
        assert node.end_lineno is not None and node.end_col_offset is not None
        segment = self._segment(node)
        prefix = segment[: len(segment) - len(segment.lstrip("rRuU"))]
        body = segment[len(prefix) :]
        quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
        return JudgePrompt(
            name=constant.name,
            value=node.value,
            line=node.lineno,
            column=self._column(node.lineno, node.col_offset),
            end_line=node.end_lineno,
            end_column=self._column(node.end_lineno, node.end_col_offset),
            quote=quote,
            prefix=prefix,
        )


def _parse(source: str) -> _Module | NoPrompt:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return NoPrompt("syntax_error", {"line": exc.lineno})
    except (RecursionError, ValueError, MemoryError):
        return NoPrompt("syntax_error", {"line": None})
    return _Module(source, tree)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _module_bindings(tree: ast.Module) -> Counter:
    """How many times each module-level name is bound: assigned, deleted, imported,
    defined, or assigned in a function that declares it global."""
    counts: Counter = Counter()

    def walk(node: ast.AST, module_scope: bool, declared: frozenset[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                if module_scope and not isinstance(child, ast.Lambda):
                    counts[child.name] += 1
                inner = frozenset(
                    name
                    for found in ast.walk(child)
                    if isinstance(found, ast.Global)
                    for name in found.names
                )
                walk(child, False, inner)
            elif isinstance(child, _COMPREHENSIONS):
                walk(child, False, declared)
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
                if module_scope or child.id in declared:
                    counts[child.id] += 1
            elif isinstance(child, ast.alias):
                if module_scope or (child.asname or child.name) in declared:
                    counts[(child.asname or child.name).split(".")[0]] += 1
            else:
                walk(child, module_scope, declared)

    walk(tree, True, frozenset())
    return counts


# -- rewriting ----------------------------------------------------------------------


def _replaced(
    source: str,
    name: str,
    new_node: Callable[[JudgePrompt, cst.SimpleString], cst.BaseExpression],
) -> str:
    found = find_constant(source, name)
    if isinstance(found, NoPrompt):
        raise ValueError(found.code)
    module = cst.parse_module(source)
    node = _literal_of(module, name)
    if node is None:  # the two parsers disagree: refuse rather than guess
        raise ValueError("no_prompt_constant")
    return module.deep_replace(node, new_node(found, node)).code


def _literal_of(module: cst.Module, name: str) -> cst.SimpleString | None:
    """The string literal the module-level statement `name = "..."` assigns."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            if isinstance(target, cst.Name) and target.value == name:
                return value if isinstance(value, cst.SimpleString) else None
    return None


def _escape_char(char: str) -> str:
    code = ord(char)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\x00"}
    if char in named:
        return named[char]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escaped(text: str, char: str, triple: bool) -> str:
    """`text` as the body of a literal between `char` quotes (three of them if `triple`)."""
    out: list[str] = []
    run = 0  # quote characters in a row so far
    for at, ch in enumerate(text):
        if ch == char:
            run += 1
            last = at == len(text) - 1
            # In a triple-quoted literal a quote is escaped only where it would close it:
            # every third in a row, and one at the very end (the closing quotes follow).
            if not triple or run % 3 == 0 or last:
                out.append("\\" + ch)
            else:
                out.append(ch)
            continue
        run = 0
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\n\t" and triple:
            out.append(ch)
        elif unicodedata.category(ch) in _ESCAPED_CATEGORIES:
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def _raw(text: str, char: str, triple: bool) -> str | None:
    """`text` as a raw literal, or None when a raw literal cannot hold it."""
    if any(unicodedata.category(ch) in _ESCAPED_CATEGORIES and ch not in "\n\t" for ch in text):
        return None
    delimiter = char * 3 if triple else char
    if char in text and not triple:
        return None
    if triple and (delimiter in text or text.endswith(char)):
        return None
    if text.endswith("\\"):
        return None
    literal = "r" + delimiter + text + delimiter
    return literal if _reads_back(literal, text) else None


def _reads_back(literal: str, text: str) -> bool:
    try:
        return ast.literal_eval(literal) == text
    except (SyntaxError, ValueError):
        return False
