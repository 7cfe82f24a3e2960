"""Other frameworks' return values, returned from inside the worker's sandbox (real dspy
3.4.1 and gepa 0.1.4 objects), named in the reader's language with the corrected return
built from their own values: in the panel, the case rows, check_metric and evaluations."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.utils.translation import override

from checks import services as check_services
from checks.models import Check
from contract.engine import run_check
from jobs import sandbox_pool
from wording import render

pytestmark = pytest.mark.django_db

HEAD = "def score(input, output, expected=None):\n"
RETURNS = {
    "float": ("", "    return 0.8\n"),
    "dict": ("", '    return {"score": 0.5, "feedback": "Close. Missing the date."}\n'),
    "prediction": (
        "import dspy\n\n",
        '    return dspy.Prediction(score=0.0, feedback="Expected 42, got 41.")\n',
    ),
    "score_with_feedback": (
        "from dspy.teleprompt.gepa.gepa_utils import ScoreWithFeedback\n\n",
        '    return ScoreWithFeedback(score=1.0, feedback="Correct.")\n',
    ),
    "evaluation_result": (
        "from gepa.adapters.default_adapter.default_adapter import EvaluationResult\n\n",
        '    return EvaluationResult(score=1.0, feedback="Right.", objective_scores={"f1": 1.0})\n',
    ),
    "tuple": ("", '    return 1.0, "Right.", None\n'),
}
# (shape's words in en, es, hi; the corrected return)
EXPECTED = {
    "float": (
        ("a float (0.8)", "un float (0.8)", "एक float (0.8)"),
        'return 0.8, {"feedback": "..."}',
    ),
    "dict": (
        (
            "a dict with the keys score, feedback",
            "un dict con las claves score, feedback",
            "कुंजियों score, feedback वाला एक dict",
        ),
        'return 0.5, {"feedback": "Close. Missing the date."}',
    ),
    "prediction": (
        (
            "a dspy.Prediction with the fields score, feedback",
            "un dspy.Prediction con los campos score, feedback",
            "फ़ील्ड score, feedback वाला एक dspy.Prediction",
        ),
        'return 0.0, {"feedback": "Expected 42, got 41."}',
    ),
    "score_with_feedback": (
        (
            "a dspy.ScoreWithFeedback with the fields score, feedback",
            "un dspy.ScoreWithFeedback con los campos score, feedback",
            "फ़ील्ड score, feedback वाला एक dspy.ScoreWithFeedback",
        ),
        'return 1.0, {"feedback": "Correct."}',
    ),
    "evaluation_result": (
        ("gepa's EvaluationResult", "el EvaluationResult de gepa", "gepa का EvaluationResult"),
        'return 1.0, {"feedback": "Right.", "scores": {"f1": 1.0}}',
    ),
    "tuple": (
        ("a tuple of 3 values", "una tupla de 3 valores", "3 मानों वाला एक tuple"),
        'return 1.0, {"feedback": "Right."}',
    ),
}


def _source(kind: str) -> str:
    imports, body = RETURNS[kind]
    return imports + HEAD + body


@pytest.fixture(scope="module")
def results():
    config = sandbox_pool.base_config()
    return {kind: run_check(_source(kind), timeout_s=20, sandbox_config=config) for kind in RETURNS}


@pytest.mark.parametrize("kind", sorted(RETURNS))
def test_each_shape_is_named_with_its_fix_in_three_languages(results, kind):
    result = results[kind].to_dict()
    assert result["failed_stage"] == "return_value"
    words, fix = EXPECTED[kind]
    for language, shape in zip(("en", "es", "hi"), words, strict=True):
        with override(language):
            case = render(result)["cases"][0]
        assert case["problem"] == "not_a_pair"
        assert shape in case["message"], (language, case["message"])
        assert case["fix"] == fix


def test_a_bare_number_is_the_docs_row_of_0_8(results):
    with override("es"):
        case = render(results["float"].to_dict())["cases"][0]
    assert case["message"] == "No. No hay información adicional: score devolvió un float (0.8)."
    assert case["docs_row_text"][:2] == ("0.8", "No. No hay información adicional.")


def _stored(owner, kind: str, results) -> Check:
    check = check_services.check_create(owner=owner, source=_source(kind))
    check.status = Check.Status.FAILED
    check.result = results[kind].to_dict()
    check.save()
    return check


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_the_panel_shows_the_corrected_return_and_the_docs_row(
    owner_client, owner, results, language
):
    check = _stored(owner, "float", results)
    body = owner_client.get(f"/{language}/checks/{check.pk}/").content.decode()
    label = {"en": "Return this instead:", "es": "Devuelve esto en su lugar:"}
    assert label.get(language, "इसके बजाय यह लौटाएँ:") in body
    assert "return 0.8, {&quot;feedback&quot;: &quot;...&quot;}" in body
    assert 'class="docs-row"' in body


def test_check_metric_prints_the_shape_and_the_fix(tmp_path):
    metric = tmp_path / "metric.py"
    metric.write_text(_source("prediction"))
    done = subprocess.run(
        [sys.executable, "manage.py", "check_metric", str(metric), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    case = json.loads(done.stdout)["cases"][0]
    assert case["shape"] == {
        "kind": "dspy_prediction",
        "class": "Prediction",
        "keys": ["score", "feedback"],
    }
    assert case["fix"] == 'return 0.0, {"feedback": "Expected 42, got 41."}'
    text = subprocess.run(
        [sys.executable, "manage.py", "check_metric", str(metric), "--language", "es"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "un dspy.Prediction con los campos score, feedback" in text
    assert 'Devuelve esto en su lugar: return 0.0, {"feedback": "Expected 42, got 41."}' in text
