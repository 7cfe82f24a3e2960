"""Names a pasted metric uses but never imports: found by pyflakes before anything runs,
each resolved to its import line where one is known, added where a reader expects them,
and added by Convert too."""

from __future__ import annotations

import ast
import textwrap

import pytest

from contract import missing_imports
from contract.convert import convert
from contract.engine import run_check
from contract.static import static_check


def _missing(source: str) -> dict[str, str]:
    source = textwrap.dedent(source)
    return {m.name: m.line_to_add for m in missing_imports.missing(ast.parse(source), source)}


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("@dataclass\nclass A:\n    x: int\n", {"dataclass": "from dataclasses import dataclass"}),
        ("class R(NamedTuple):\n    a: int\n", {"NamedTuple": "from typing import NamedTuple"}),
        ("x = re.sub('a', 'b', 'c')\n", {"re": "import re"}),
        ("x = json.loads('1')\n", {"json": "import json"}),
        ("x = np.mean([1])\n", {"np": "import numpy as np"}),
        ("x = pd.DataFrame()\n", {"pd": "import pandas as pd"}),
        ("x = fuzz.ratio('a', 'b')\n", {"fuzz": "from rapidfuzz import fuzz"}),
        ("x = Counter('ab')\n", {"Counter": "from collections import Counter"}),
        ("x = datetime.now()\n", {"datetime": "from datetime import datetime"}),
        ("x = datetime.date.today()\n", {"datetime": "import datetime"}),
        ("x = llm('Say yes.')\n", {"llm": "from skynet import llm"}),
        ("x = dspy.Prediction(score=1)\n", {"dspy": "import dspy"}),
        ("x: Optional[int] = None\n", {"Optional": "from typing import Optional"}),
        # gepa's types: the sandbox has no gepa, so no line is offered.
        ("x = EvaluationResult(1.0, 'ok')\n", {"EvaluationResult": ""}),
        # A name nothing is known of (a helper from another file).
        ("x = eval_score(1, 2)\n", {"eval_score": ""}),
    ],
)
def test_each_name_is_found_and_resolved_to_its_usual_import(source, want):
    assert _missing(source) == want


def test_what_is_bound_anywhere_is_not_missing():
    source = """
    import json as j
    from typing import *  # a star import: nothing is guessed
    """
    assert _missing(source) == {}
    source = """
    def score(input, output, expected=None):
        total = sum(len(x) for x in output)
        return float(total), {"feedback": str(helper())}

    def helper():
        return print
    """
    assert _missing(source) == {}


def test_each_name_is_placed_at_its_first_use_in_characters():
    source = 'x = "é"; y = np.array([1])\nz = np.zeros(1)\n'
    (found,) = missing_imports.missing(ast.parse(source), source)
    assert (found.line, found.column, found.end_column) == (1, 14, 16)  # not 15: é is 2 bytes


@pytest.mark.parametrize(
    ("source", "want"),
    [
        # After a docstring, with a blank line either side.
        (
            '"""A metric."""\n\ndef f():\n    return np.pi\n',
            '"""A metric."""\n\nimport numpy as np\n\ndef f():\n    return np.pi\n',
        ),
        # Joining the module's own imports, sorted and merged per module.
        (
            "import os\n\n@dataclass\nclass A:\n    c: Counter\n    d: defaultdict\n",
            "import os\nfrom collections import Counter, defaultdict\n"
            "from dataclasses import dataclass\n\n@dataclass\nclass A:\n"
            "    c: Counter\n    d: defaultdict\n",
        ),
        # After a file's header comment, which stays first.
        (
            "# Copied from a tutorial.\n\ndef f():\n    return json.dumps(1)\n",
            "# Copied from a tutorial.\n\nimport json\n\ndef f():\n    return json.dumps(1)\n",
        ),
        # A comment on the first function stays with it.
        (
            "# the metric\ndef f():\n    return json.dumps(1)\n",
            "import json\n\n# the metric\ndef f():\n    return json.dumps(1)\n",
        ),
        # Windows line ends are kept.
        ("def f():\r\n    return re.I\r\n", "import re\r\n\r\ndef f():\r\n    return re.I\r\n"),
    ],
)
def test_the_lines_go_where_a_reader_expects_them(source, want):
    fixed = missing_imports.fix(source)
    assert fixed.source == want
    assert fixed.source.splitlines()[fixed.line - 1] == fixed.added[0]


def test_fixing_twice_adds_nothing_more_and_names_what_is_left():
    source = "def score(input, output, expected=None):\n    return eval_score(np.ones(1)), {}\n"
    once = missing_imports.fix(source)
    assert once.added == ["import numpy as np"] and once.left == ["eval_score"]
    twice = missing_imports.fix(once.source)
    assert twice.source == once.source and twice.added == [] and twice.left == ["eval_score"]


def test_a_source_that_does_not_parse_is_said_not_fixed():
    fixed = missing_imports.fix("def score(:\n")
    assert fixed.problem == "syntax_error" and fixed.added == []


PASTED = """
@dataclass
class Verdict:
    score: float
    feedback: str


def score(input, output, expected=None):
    words = Counter(re.findall(r"\\w+", output.lower()))
    hit = words[expected["label"]] > 0
    verdict = Verdict(1.0 if hit else 0.0, f"Expected {expected['label']!r} in {output!r}.")
    return verdict.score, {"feedback": verdict.feedback}
"""


def test_load_fails_before_anything_runs_naming_each_name_and_its_line():
    result = static_check(PASTED).to_dict()
    load = result["stages"][0]
    assert result["failed_stage"] == "load" and load["problem"] == "names_not_imported"
    assert load["params"]["names"] == "dataclass, Counter, re"
    assert load["params"]["fix"] == [
        "import re",
        "from collections import Counter",
        "from dataclasses import dataclass",
    ]
    first = load["problems"][0]["params"]
    assert (first["name"], first["line"], first["column"]) == ("dataclass", 2, 2)


def test_the_check_fails_at_load_without_running_a_case_then_passes_once_fixed():
    result = run_check(PASTED, timeout_s=10)
    assert result.failed_stage == "load"
    assert result.stage("load").problem == "names_not_imported"
    assert all(case.status == "skipped" for case in result.cases)
    fixed = missing_imports.fix(PASTED)
    assert run_check(fixed.source, timeout_s=10).passed is True


def test_a_dspy_metric_without_score_is_told_what_it_is_and_what_is_missing():
    source = textwrap.dedent(
        """
        def metric(example, pred, trace=None):
            gold = json.loads(example.answer)
            return dspy.Prediction(score=float(pred.label == gold), feedback="ok")
        """
    )
    load = static_check(source).to_dict()["stages"][0]
    assert load["problem"] == "no_score_function"
    assert load["params"]["candidates"][0]["framework"] == "dspy"
    assert [p["params"]["name"] for p in load["problems"][1:]] == ["json", "dspy"]


def test_convert_adds_the_imports_the_converted_metric_still_needs():
    source = textwrap.dedent(
        """
        def metric(example, pred, trace=None):
            gold = json.loads(example.answer)
            right = float(pred.label == gold)
            return dspy.Prediction(score=right, feedback=f"Expected {gold!r}.")
        """
    )
    conversion = convert(source)
    # json is added; dspy, which only shaped the return, is no longer used at all.
    assert "import json" in conversion.source and "dspy" not in conversion.source
    assert _missing(conversion.source) == {}
    added = [n for n in conversion.notes if n.code == "imports_added"]
    assert added and added[0].params == {"lines": ["import json"]}
    assert conversion.source.splitlines()[added[0].line - 1] == "import json"
    # The other notes still point at their lines after the insertion.
    for note in conversion.notes:
        if note.code == "feedback_needed":
            assert "return" in conversion.source.splitlines()[note.line - 1]
