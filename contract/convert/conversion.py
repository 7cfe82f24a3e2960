"""convert(source): a DSPy GEPA or gepa metric's source, rewritten into the contract.

Three passes over a libcst tree, which keeps every comment and all the formatting the
rewrite does not touch: the branches on DSPy's trace parameters are decided (trace.py),
the metric function becomes `score` (rewrite.py), and the dspy and gepa imports left
unused go (imports.py). Where a pass cannot decide, it leaves the code as it was with a
`# convert:` comment and a note.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from contract import missing_imports
from contract.convert.elide import elide, restore
from contract.convert.imports import tidy_imports
from contract.convert.notes import COMMENT_PREFIX, NOTE_CODES, ConvertError, Note, NoteBook
from contract.convert.parse import parse
from contract.convert.predictors import route_predictors
from contract.convert.recognise import Located, Recognition, locate
from contract.convert.return_plan import returns_only
from contract.convert.rewrite import rewrite
from contract.convert.trace import decide_traces

# Changes whenever a conversion of the same text would come out differently (a kept
# conversion of an older converter is then made again): 2 adds missing imports, maps
# gepa's data as its default adapter does and keeps predictor feedback.
CONVERTER_VERSION = "2"


@dataclass(frozen=True)
class Conversion:
    source: str  # the converted metric.py
    framework: str | None  # "dspy", "gepa", or None when no metric function was recognised
    changed: bool
    notes: list[Note] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "framework": self.framework,
            "changed": self.changed,
            "notes": [note.to_dict() for note in self.notes],
        }


def convert(source: str, metric: str | None = None) -> Conversion:
    """The source rewritten into the contract; raises ConvertError on a syntax error.

    `metric` names the function to convert where several could be the metric (the note
    "several_metric_functions" lists them). Converting the result again changes nothing:
    its `score` is in the contract's form.
    Long constant data is set aside while the passes run (elide.py), so the time goes
    to the code, not to a table of numbers after it.
    """
    elided, taken = elide(source)
    if taken:
        conversion = _convert(elided, metric)
        text = restore(conversion.source, taken)
        if text is not None and _compiles(text):
            return replace(conversion, source=text, changed=text != source)
    return _convert(source, metric)


def _convert(source: str, metric: str | None = None) -> Conversion:
    wrapper = MetadataWrapper(parse(source))
    located = locate(wrapper, metric)
    unchanged = _unchanged(source, located)
    if unchanged is not None:
        return unchanged
    assert located.chosen is not None
    chosen = located.chosen
    book = NoteBook()
    routed = route_predictors(wrapper.module, chosen.function)
    if routed is not None:
        # Each predictor's feedback kept (predictors.py); the metric found again.
        wrapper = MetadataWrapper(routed)
        located = locate(wrapper, chosen.recognition.name)
        assert located.chosen is not None
        chosen = located.chosen

    decided = decide_traces(wrapper, chosen.function)
    rewritten = rewrite(MetadataWrapper(decided), chosen, located.others, book)
    text, notes = book.resolve(tidy_imports(rewritten, book).code)
    try:
        tree = ast.parse(text, "metric.py")
    except (SyntaxError, ValueError) as exc:  # a rewrite that broke the code is our bug
        raise ConvertError(
            "internal_error", getattr(exc, "lineno", None), {"msg": str(exc)}
        ) from exc
    text, notes = _imports_added(text, tree, notes)
    return Conversion(text, chosen.recognition.framework, text != source, notes)


def _imports_added(text: str, tree: ast.Module, notes: list[Note]) -> tuple[str, list[Note]]:
    """The converted text with the imports of the names it uses but never imports (a
    notebook cell pasted without its import lines), and its notes with their lines moved
    down past the added lines. Names the conversion itself no longer uses (a
    dspy.Prediction that shaped a return) are not missing any more."""
    found = missing_imports.missing(tree, text)
    if not found:
        return text, notes
    lines = [m.line_to_add for m in found if m.line_to_add]
    added = missing_imports.import_block(lines)
    changed, first = missing_imports.add_imports(text, tree, lines)
    shift = len(changed.splitlines()) - len(text.splitlines())
    moved = [
        replace(note, line=note.line + shift) if note.line >= first else note for note in notes
    ]
    if added:
        moved.append(Note("imports_added", first, {"lines": added}))
    left = [m for m in found if not m.line_to_add]
    if left:
        line = left[0].line + (shift if left[0].line >= first else 0)
        moved.append(Note("names_not_defined", line, {"names": [m.name for m in left]}))
    moved.sort(key=lambda note: (note.line, NOTE_CODES.index(note.code)))
    return changed, moved


def _compiles(text: str) -> bool:
    try:
        compile(text, "metric.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _unchanged(source: str, located: Located) -> Conversion | None:
    """The conversion of a source left as it is, or None when there is work to do."""
    if located.status == "found":
        return None
    if located.status == "contract":
        # The contract's signature already. Its returns may still be a framework's
        # (dspy.Prediction, an EvaluationResult, a bare score), and names may be
        # missing their imports; what a conversion left to do is still to do.
        return _contract_form(source)
    if located.status == "none":
        return Conversion(source, None, False, [Note("no_metric_function", 0)])
    if located.status == "several":
        frameworks = {c.recognition.framework for c in located.others}
        framework = frameworks.pop() if len(frameworks) == 1 else None
        functions = [c.recognition.name for c in located.others]
        note = Note("several_metric_functions", located.line, {"names": functions})
        return Conversion(source, framework, False, [note])
    assert located.chosen is not None
    rec = located.chosen.recognition
    if located.status == "score_taken":
        note = Note("score_name_taken", located.line, {"name": rec.name})
    else:  # "clash"
        note = Note(
            "parameter_names_clash",
            located.line,
            {"name": rec.name, "names": [rec.example, rec.prediction]},
        )
    return Conversion(source, rec.framework, False, [note])


def _contract_form(source: str) -> Conversion:
    """A metric with the contract's `score(input, output, expected)`: its returns
    rewritten as the contract's pair where they are a framework's object or a bare score,
    and the imports of the names it uses added."""
    wrapper = MetadataWrapper(parse(source))
    function = next(
        s for s in wrapper.module.body if isinstance(s, cst.FunctionDef) and s.name.value == "score"
    )
    params = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
    recognition = Recognition(
        framework="",
        kind="function",
        name="score",
        line=0,
        example=params[0] if params else "input",
        prediction=params[1] if len(params) > 1 else "output",
    )
    book = NoteBook()
    ctx, framework = returns_only(wrapper, function, recognition)
    if not ctx.plan.replace:
        text, notes = source, _left_comments(source)
    else:
        rewritten = wrapper.module.visit(_Applied(ctx, book))
        text, notes = book.resolve(tidy_imports(rewritten, book).code)
    try:
        tree = ast.parse(text, "metric.py")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Conversion(source, None, False, _left_comments(source))
    text, notes = _imports_added(text, tree, notes)
    return Conversion(text, framework, text != source, notes)


class _Applied(cst.CSTTransformer):
    """Applies a plan's replacements and comments, nothing else."""

    def __init__(self, ctx, book: NoteBook) -> None:
        super().__init__()
        self.ctx, self.book = ctx, book

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        plan = self.ctx.plan
        if original in plan.replace:
            result = plan.replace[original](result)
        if original in plan.comments and hasattr(result, "leading_lines"):
            comments = [self.book.comment(code, params) for code, params in plan.comments[original]]
            result = result.with_changes(leading_lines=[*result.leading_lines, *comments])
        return result


def _left_comments(source: str) -> list[Note]:
    """A note for each `# convert:` comment a conversion left and nobody has dealt with,
    at the line of the statement it stands above (as the conversion's note was)."""
    lines = source.splitlines()
    notes = []
    for index, line in enumerate(lines):
        text = line.strip()
        if not text.startswith(COMMENT_PREFIX):
            continue
        target = index + 1
        while target < len(lines) and lines[target].lstrip().startswith(COMMENT_PREFIX):
            target += 1
        said = text.removeprefix(COMMENT_PREFIX).strip()
        notes.append(Note("convert_comment", min(target, len(lines) - 1) + 1, {"text": said}))
    return notes
