"""The Signature stage recognises a DSPy metric's or a gepa evaluator's parameters: it
fails where the call cannot mean what the metric wants, and warns where it would work."""

from __future__ import annotations

import pytest

from contract import frameworks
from contract.engine import static_check
from skynet.signature import Param, Shape


def _shape(*names: str, defaults_from: int = 99) -> Shape:
    return Shape(tuple(Param(n, i < defaults_from) for i, n in enumerate(names)))


@pytest.mark.parametrize(
    ("names", "framework", "fails"),
    [
        (("example", "prediction", "trace", "pred_name", "pred_trace"), "dspy", True),
        (("gold", "pred", "trace"), "dspy", True),
        (("example", "pred", "trace", "pred_name", "pred_trace", "program_trace"), "dspy", True),
        (("example", "pred"), "dspy", False),
        (("data", "response"), "gepa", False),
        (("input", "output", "expected"), None, None),
        (("question", "answer"), None, None),
    ],
)
def test_recognise(names, framework, fails):
    found = frameworks.recognise(_shape(*names, defaults_from=2))
    if framework is None:
        assert found is None
    else:
        assert (found["framework"], found["fails"]) == (framework, fails)
        assert found["gold"] == names[0] and found["prediction"] == names[1]


DSPY_METRIC = """\
def score(example, prediction, trace=None, pred_name=None, pred_trace=None):
    return float(example.answer == prediction.answer), {"feedback": "x"}
"""


def test_a_dspy_signature_fails_at_signature_in_the_real_check(check):
    result = check(DSPY_METRIC, one=True)
    stage = result.stage("signature")
    assert (stage.status, stage.problem, result.failed_stage) == (
        "failed",
        "framework_signature",
        "signature",
    )
    assert stage.params["framework"] == "dspy"
    assert stage.params["dropped"] == ["trace", "pred_name", "pred_trace"]
    # It never reaches Calls, where it used to die with a KeyError.
    assert result.stage("call").status == "skipped"
    assert result.cases[0].status == "skipped"


def test_the_editor_marks_the_same_signature_at_its_line():
    stage = static_check(DSPY_METRIC).stage("signature")
    assert (stage.status, stage.problem) == ("failed", "framework_signature")
    assert stage.params["line"] == 1


def test_gepa_names_pass_with_a_warning(check):
    source = 'def score(data, response):\n    return 1.0, {"feedback": "ok"}\n'
    result = check(source, one=True)
    stage = result.stage("signature")
    assert result.passed is True and stage.status == "passed"
    assert [w["code"] for w in stage.warnings] == ["framework_signature"]
    assert stage.warnings[0]["params"]["framework"] == "gepa"
    assert static_check(source).stage("signature").warnings[0]["params"]["framework"] == "gepa"


def test_the_contracts_own_names_get_no_warning(check):
    result = check('def score(input, output, expected=None):\n    return 1.0, {"feedback": "ok"}\n')
    assert result.stage("signature").warnings == []


def test_a_metric_py_without_score_names_the_function_that_looks_like_a_metric(check):
    source = (
        "import json\n\n\n"
        "def metric_with_feedback(example, prediction, trace=None, pred_name=None, pred_trace=None):\n"
        "    return 1.0\n\n\n"
        "class ContainsAnswerEvaluator:\n"
        "    def __call__(self, data, response):\n"
        "        return 1.0\n"
    )
    expected = [
        {
            "name": "metric_with_feedback",
            "line": 4,
            "framework": "dspy",
            "parameters": ["example", "prediction", "trace", "pred_name", "pred_trace"],
        },
        {
            "name": "ContainsAnswerEvaluator",
            "line": 9,
            "framework": "gepa",
            "parameters": ["data", "response"],
        },
    ]
    load = check(source, one=True).stage("load")
    assert (load.problem, load.params["candidates"]) == ("no_score_function", expected)
    assert static_check(source).stage("load").params["candidates"] == expected


def test_a_metric_py_without_score_or_candidates_says_only_that(check):
    load = check("def scorer(input, output):\n    pass\n", one=True).stage("load")
    assert load.problem == "no_score_function" and "candidates" not in load.params
