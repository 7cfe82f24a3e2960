"""The two files an alignment run is made of, written as source text: the program GEPA
optimizes (its artifact is the judge's prompt) and the metric that scores it (does the
judge now say what the person said?).

The program runs the judge metric's own source in the artifact's sandbox, with its prompt
constant set to the artifact, on the case rebuilt from the row: the judge's llm() calls
there go to the task model, which is why the draft's task model is the judge's model (a
program's llm() is answered by the task model, as a metric's is by the metric model). The
agreement metric gets the person's judgement as its expected value and compares.

Both are generated from a few settings written as Python literals at their top, then a
fixed body: nothing of a user's text is ever pasted into code but as a literal that
reads back as itself (contract.judge_prompt.string_literal, repr).
"""

from __future__ import annotations

from dataclasses import dataclass

from contract import judge_prompt

# The name the judge's source reads its prompt from once the constant's literal is cut out:
# the program defines it, set to the artifact, before running that source.
PROMPT_NAME = "__skynet_prompt__"
# Of the judge's own feedback, what the agreement metric's feedback quotes at most.
QUOTED_FEEDBACK = 1500


@dataclass(frozen=True)
class Columns:
    """Which of the row's columns make the judge's case, and which hold the person's
    judgement (an evaluation's roles, recorded column and human settings)."""

    inputs: tuple[str, ...]
    output: str
    expected: tuple[str, ...]
    # human: {"label_column" | "score_column", "note_column", "classes" | "scale",
    # "threshold"} as dataset_files.human_settings reads them.
    human: dict

    @property
    def person(self) -> tuple[str, ...]:
        """The human columns, the value's first."""
        value = self.human.get("label_column") or self.human.get("score_column")
        note = self.human.get("note_column")
        return (value, note) if note else (value,)

    @property
    def program_inputs(self) -> tuple[str, ...]:
        """Every column the program reads, each once, in this order."""
        return tuple(dict.fromkeys((*self.inputs, self.output, *self.expected)))


def program_source(judge_source: str, constant: str, columns: Columns, metric_name: str) -> str:
    """The program whose run(artifact, input) is the judge with `artifact` as its prompt."""
    judge = judge_prompt.replace_with_name(judge_source, constant, PROMPT_NAME)
    header = (
        f'"""The judge metric {metric_name!r} as a program: the artifact is its prompt\n'
        f"({constant}), which GEPA rewrites; each case runs the judge's score() on the row\n"
        "and answers its score and feedback, which the agreement metric compares with the\n"
        'person\'s judgement. Written by the workbench when the judge was aligned."""\n\n'
        f"# metric.py as it was, its {constant} read from {PROMPT_NAME}.\n"
        f"JUDGE_SOURCE = {judge_prompt.string_literal(judge, chr(34) * 3)}\n"
        f"PROMPT_NAME = {PROMPT_NAME!r}\n"
        f"INPUT_COLUMNS = {list(columns.inputs)!r}\n"
        f"OUTPUT_COLUMN = {columns.output!r}\n"
        f"EXPECTED_COLUMNS = {list(columns.expected)!r}\n"
    )
    return header + PROGRAM_BODY


def agreement_source(columns: Columns) -> str:
    """The metric scoring the program: does the judge's verdict match the person's?"""
    human = columns.human
    kind = "score" if human.get("score_column") else "label"
    header = (
        '"""Does the judge agree with the person? For a label: 1 when the judge\'s verdict\n'
        "(its score read as one of the classes, as the evaluation's page reads it) is the\n"
        "person's label, else 0. For a score: 1 minus the distance between the judge's score\n"
        "and the person's, both on 0 to 1. The feedback says where and how the judge\n"
        "disagreed, with the person's note and the judge's own feedback. Written by the\n"
        'workbench when the judge was aligned."""\n\n'
        "import bisect\n"
        "import math\n\n"
        f"KIND = {kind!r}\n"
        f"LABEL_COLUMN = {human.get('label_column') or ''!r}\n"
        f"SCORE_COLUMN = {human.get('score_column') or ''!r}\n"
        f"NOTE_COLUMN = {human.get('note_column') or ''!r}\n"
        f"CLASSES = {list(human.get('classes') or [])!r}\n"
        f"THRESHOLD = {float(human.get('threshold', 0.5))!r}\n"
        f"SCALE = {[float(x) for x in human.get('scale') or (0.0, 1.0)]!r}\n"
        f"QUOTED = {QUOTED_FEEDBACK!r}\n"
    )
    return header + AGREEMENT_BODY


PROGRAM_BODY = '''

def _judge(prompt):
    """The judge's score(), from its source run with its prompt set to `prompt`."""
    namespace = {"__name__": "metric", "__file__": "metric.py", PROMPT_NAME: prompt}
    exec(compile(JUDGE_SOURCE, "metric.py", "exec"), namespace)
    return namespace["score"]


def _case(values):
    """The case the judge scored in the evaluation, rebuilt from the row's values: the
    expected value is None when every expected column is empty, as a case's is."""
    judged = {column: values.get(column) for column in INPUT_COLUMNS}
    expected = {column: values.get(column) for column in EXPECTED_COLUMNS}
    if all(value is None for value in expected.values()):
        expected = None
    return judged, values.get(OUTPUT_COLUMN), expected


def _takes_expected(score):
    code = getattr(score, "__code__", None)
    return code is None or code.co_argcount >= 3 or bool(code.co_flags & 0x04)


def run(artifact, input):
    score = _judge(artifact)
    judged, output, expected = _case(input)
    if _takes_expected(score):
        returned = score(judged, output, expected)
    else:
        returned = score(judged, output)
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise TypeError(
            "the judge's score() returned %s, not (score, {'feedback': ...})"
            % type(returned).__name__
        )
    number, side = returned
    feedback = side.get("feedback") if isinstance(side, dict) else side
    return {"score": number, "feedback": "" if feedback is None else str(feedback)}
'''

AGREEMENT_BODY = '''

def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _verdict(score):
    """The judge's score as one of CLASSES (lowest first), as the evaluation's page reads
    it: with two classes the higher from THRESHOLD up; with more, equal-width bins over 0
    to 1, a score on an edge in the higher bin."""
    if len(CLASSES) == 2:
        return CLASSES[int(score >= THRESHOLD)]
    edges = [i / len(CLASSES) for i in range(1, len(CLASSES))]
    return CLASSES[bisect.bisect_right(edges, score)]


def _label(value):
    """The person's label as one of CLASSES (compared without case), or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip().casefold()
    return next((c for c in CLASSES if c.casefold() == text), None)


def _told(text, note, said):
    if note:
        text += " The person's note: " + note
    if said:
        text += " The judge's feedback: " + said[:QUOTED]
    return text


def _label_agreement(number, person, note, said):
    label = _label(person.get(LABEL_COLUMN))
    verdict = _verdict(number)
    if label is None:
        return 0.0, {"feedback": _told("The person gave no label to compare with.", note, said)}
    if verdict == label:
        text = "The judge scored %g (%s) and the person said %s too." % (number, verdict, label)
        return 1.0, {"feedback": _told(text, note, said)}
    text = "The judge scored %g (%s) but the person said %s." % (number, verdict, label)
    return 0.0, {"feedback": _told(text, note, said)}


def _score_agreement(number, person, note, said):
    given = _number(person.get(SCORE_COLUMN))
    if given is None:
        return 0.0, {"feedback": _told("The person gave no score to compare with.", note, said)}
    low, high = SCALE
    theirs = min(1.0, max(0.0, (given - low) / (high - low)))
    ours = min(1.0, max(0.0, number))
    gap = abs(ours - theirs)
    text = "The judge scored %g (%.2f on 0 to 1) where the person gave %g on %g to %g (%.2f)" % (
        number, ours, given, low, high, theirs
    )
    if gap < 0.005:
        text += ": they agree."
    elif ours > theirs:
        text += ": the judge was too generous by %.2f." % gap
    else:
        text += ": the judge was too harsh by %.2f." % gap
    return 1.0 - gap, {"feedback": _told(text, note, said)}


def score(input, output, expected=None):
    person = expected if isinstance(expected, dict) else {}
    note = str(person.get(NOTE_COLUMN) or "").strip() if NOTE_COLUMN else ""
    judged = output if isinstance(output, dict) else {}
    said = str(judged.get("feedback") or "").strip()
    number = _number(judged.get("score"))
    if number is None:
        text = "The judge gave no number to compare: it returned %s." % repr(output)[:200]
        return 0.0, {"feedback": _told(text, note, said)}
    if KIND == "label":
        return _label_agreement(number, person, note, said)
    return _score_agreement(number, person, note, said)
'''
