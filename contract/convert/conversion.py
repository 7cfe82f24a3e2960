"""convert(source): a DSPy GEPA or gepa metric's source, rewritten into the contract.

Three passes over a libcst tree, which keeps every comment and all the formatting the
rewrite does not touch: the branches on DSPy's trace parameters are decided (trace.py),
the metric function becomes `score` (rewrite.py), and the dspy and gepa imports left
unused go (imports.py). Where a pass cannot decide, it leaves the code as it was with a
`# convert:` comment and a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from libcst.metadata import MetadataWrapper

from contract.convert.elide import elide, restore
from contract.convert.imports import tidy_imports
from contract.convert.notes import COMMENT_PREFIX, ConvertError, Note, NoteBook
from contract.convert.parse import parse
from contract.convert.recognise import Located, locate
from contract.convert.rewrite import rewrite
from contract.convert.trace import decide_traces


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


def convert(source: str) -> Conversion:
    """The source rewritten into the contract; raises ConvertError on a syntax error.

    Converting the result again changes nothing: its `score` is in the contract's form.
    Long constant data is set aside while the passes run (elide.py), so the time goes
    to the code, not to a table of numbers after it.
    """
    elided, taken = elide(source)
    if taken:
        conversion = _convert(elided)
        text = restore(conversion.source, taken)
        if text is not None and _compiles(text):
            return replace(conversion, source=text, changed=text != source)
    return _convert(source)


def _convert(source: str) -> Conversion:
    wrapper = MetadataWrapper(parse(source))
    located = locate(wrapper)
    unchanged = _unchanged(source, located)
    if unchanged is not None:
        return unchanged
    assert located.chosen is not None
    chosen = located.chosen
    book = NoteBook()

    decided = decide_traces(wrapper, chosen.function)
    rewritten = rewrite(MetadataWrapper(decided), chosen, located.others, book)
    text, notes = book.resolve(tidy_imports(rewritten, book).code)
    try:
        compile(text, "metric.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # a rewrite that broke the code is our bug
        raise ConvertError(
            "internal_error", getattr(exc, "lineno", None), {"msg": str(exc)}
        ) from exc
    return Conversion(text, chosen.recognition.framework, text != source, notes)


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
        # Already in the contract's form, maybe converted before: what a conversion left
        # to do is still to do.
        return Conversion(source, None, False, _left_comments(source))
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
