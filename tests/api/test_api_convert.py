"""POST /api/v1/metrics/convert: the Convert page's conversion, its notes in the
reader's words, the pick among several metrics, and its limits."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

DSPY = """\
import dspy


def metric(example, pred, trace=None):
    right = pred.answer == example.answer
    return dspy.Prediction(score=float(right), feedback=f"Expected {example.answer}.")
"""

TWO = """\
def exact(example, pred, trace=None):
    return float(pred.answer == example.answer)


def loose(example, pred, trace=None):
    return float(example.answer in pred.answer)
"""


def test_a_dspy_metric_comes_back_converted(api):
    response = api.post("/metrics/convert", {"source": DSPY})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["framework"] == "dspy" and body["changed"] is True
    assert "def score(input, output, expected=None):" in body["source"]
    assert "import dspy" not in body["source"]
    assert body["notes"] == []


def test_several_metrics_are_named_and_one_can_be_picked(api):
    first = api.post("/metrics/convert", {"source": TWO}).json()
    assert first["changed"] is False
    (note,) = first["notes"]
    assert note["code"] == "several_metric_functions" and "exact, loose" in note["message"]
    picked = api.post("/metrics/convert", {"source": TWO, "metric": "loose"}).json()
    assert picked["changed"] is True
    assert "def exact(example, pred, trace=None):" in picked["source"]
    assert 'return float(example["answer"] in output), {"feedback": ""}' in picked["source"]
    assert sorted(n["code"] for n in picked["notes"]) == [
        "feedback_needed",
        "other_metric_functions",
    ]


def test_a_syntax_error_is_422_in_the_readers_language(api):
    response = api.post(
        "/metrics/convert", {"source": "def metric(:\n"}, headers={"Accept-Language": "es"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "syntax_error" and body["field"] == "source"
    assert "Error de sintaxis" in body["message"]


def test_past_its_rate_it_is_429(api, settings):
    settings.CONVERT_RATE_PER_MINUTE = 1
    assert api.post("/metrics/convert", {"source": DSPY}).status_code == 200
    refused = api.post("/metrics/convert", {"source": DSPY + "\n# another text\n"})
    assert refused.status_code == 429 and refused.json()["code"] == "convert_rate_limited"
