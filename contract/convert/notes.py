"""What the converter could not decide: notes as codes, and the comments it leaves.

A note is a code, the line of the converted metric.py it is about and its parameters,
never prose: the web page and the command word them in the reader's language
(wording/convert.py). In the converted code itself the same place gets a comment
starting `# convert:`, in English, since the code is Python whatever the reader's
language.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

import libcst as cst

# Every note code, in the order a reader meets them.
NOTE_CODES = (
    "no_metric_function",
    "several_metric_functions",
    "other_metric_functions",
    "score_name_taken",
    "parameter_names_clash",
    "trace_used",
    "pred_name_used",
    "pred_trace_used",
    "program_trace_used",
    "extra_arguments_used",
    "example_method_used",
    "example_passed_on",
    "prediction_used",
    "prediction_fields",
    "return_not_understood",
    "feedback_needed",
    "dspy_still_used",
    "gepa_still_used",
    "old_name_called",
    "evaluator_needs_arguments",
    "imports_added",
    "names_not_defined",
    "convert_comment",
)

# The comment left in the code, by code (str.format with the note's params). Codes that
# leave the source as it was (nothing recognised, nothing safe to do) have none.
COMMENTS = {
    "other_metric_functions": "left as it was: {chosen} is the metric converted to score",
    "trace_used": "trace is always None in the workbench (there is no DSPy trace); check the code that reads it",
    "pred_name_used": "pred_name is always None in the workbench (feedback is asked for the whole program); check the code that reads it",
    "pred_trace_used": "pred_trace is always None in the workbench (there is no DSPy trace); check the code that reads it",
    "program_trace_used": "program_trace is always None in the workbench (there is no DSPy trace); check the code that reads it",
    "extra_arguments_used": "{name} is always empty in the workbench (score gets only input, output and expected); check the code that reads it",
    "example_method_used": "{name} is now a dict of the case's columns, which has no .{method}(); rewrite this",
    "example_passed_on": "{name} is now a dict of the case's input and expected columns, not a dspy.Example; check that this accepts a dict",
    "prediction_used": "{name} was the whole prediction; output is the program's output field (a dict of them when there are several); check this use",
    "prediction_fields": "output is a dict of the program's output fields only when the dataset has several output columns; this reads {fields}",
    "return_not_understood": 'this return was left as it was: make it return a pair, score, {{"feedback": "..."}}',
    "feedback_needed": "this returns only a score: write feedback that says what is wrong and what a correct output looks like",
    "dspy_still_used": "this still uses dspy: in the workbench dspy's LM is the metric model, which llm() calls too; check this part by hand",
    "gepa_still_used": "this still uses gepa, which a metric in the workbench does not need; check this part by hand",
    "old_name_called": "this calls the metric by its old name, {name}, with its old arguments; score takes (input, output, expected)",
    "evaluator_needs_arguments": "{name}() needs arguments: give them here",
}

COMMENT_PREFIX = "# convert:"


@dataclass(frozen=True)
class Note:
    """One place the converter could not decide. `line` is 1-based in the converted
    source, 0 when the note is about the whole file."""

    code: str
    line: int
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"code": self.code, "line": self.line, "params": dict(self.params)}


class ConvertError(Exception):
    """The source cannot be converted at all (a syntax error): a code, its line, params."""

    def __init__(self, code: str, line: int | None = None, params: dict | None = None) -> None:
        self.code = code
        self.line = line
        self.params = params or {}
        super().__init__(f"{code} at line {line}: {self.params}")


def _shown(value: object) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


class NoteBook:
    """Collects notes while the passes run.

    A comment's note learns its line only once the whole module is written out, after
    every pass: each comment carries a marker until `resolve` reads the lines and takes
    the markers out. The marker holds a random token, so no text of the metric's own can
    be mistaken for one.
    """

    def __init__(self) -> None:
        self._token = secrets.token_hex(6)
        self._pending: list[tuple[str, str, dict]] = []
        self._placed: list[Note] = []

    def comment(self, code: str, params: dict) -> cst.EmptyLine:
        """A `# convert:` comment line for `code`, its note placed at the line below it."""
        marker = f"[{self._token}:{len(self._pending)}]"
        self._pending.append((marker, code, params))
        text = COMMENTS[code].format(**{key: _shown(value) for key, value in params.items()})
        return cst.EmptyLine(comment=cst.Comment(f"{COMMENT_PREFIX} {marker}{text}"))

    def add(self, code: str, line: int, params: dict | None = None) -> None:
        """A note with no comment: the source keeps no trace of it."""
        self._placed.append(Note(code, line, params or {}))

    def resolve(self, text: str) -> tuple[str, list[Note]]:
        """The text without markers, and every note with its line, in line order."""
        lines = text.splitlines(keepends=True)
        notes = list(self._placed)
        where = {marker: (code, params) for marker, code, params in self._pending}
        pattern = re.compile(re.escape(f"[{self._token}:") + r"\d+\]")
        for index, line in enumerate(lines):
            found = pattern.search(line)
            if not found:
                continue
            code, params = where[found.group(0)]
            lines[index] = line[: found.start()] + line[found.end() :]
            # The note is about the statement the comment stands above, past any other
            # comment of ours on the same statement.
            target = index + 1
            while target < len(lines) and lines[target].lstrip().startswith(COMMENT_PREFIX):
                target += 1
            notes.append(Note(code, min(target, len(lines) - 1) + 1, params))
        notes.sort(key=lambda note: (note.line, NOTE_CODES.index(note.code)))
        return "".join(lines), notes
