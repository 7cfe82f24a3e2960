"""Rewrites a metric written for DSPy GEPA or for gepa into the workbench's contract.

    from contract.convert import convert
    conversion = convert(source)   # .source, .framework, .changed, .notes

A DSPy metric `metric(example, pred, trace=None, pred_name=None, pred_trace=None)` that
returns `dspy.Prediction(score=..., feedback=...)`, or a gepa evaluator `(data, response)`
that returns an `EvaluationResult`, becomes `score(input, output, expected=None)`
returning `(score, {"feedback": ...})`. libcst keeps the comments and the formatting of
everything the rewrite does not touch.

Where the converter cannot decide, it leaves a `# convert:` comment in the code and a
`Note` (a code, a line, params; the words are in wording/convert.py). A syntax error
raises `ConvertError`. Converting a converted metric again changes nothing.

No Django here (the import contracts hold the core to that): the command line and the
web page call this and word the notes.
"""

from __future__ import annotations

from contract.convert.conversion import CONVERTER_VERSION, Conversion, convert
from contract.convert.notes import NOTE_CODES, ConvertError, Note
from contract.convert.recognise import Recognition, recognise

__all__ = [
    "CONVERTER_VERSION",
    "NOTE_CODES",
    "Conversion",
    "ConvertError",
    "Note",
    "Recognition",
    "convert",
    "recognise",
]
