"""Each DSPy predictor's own feedback on the check panel's case rows, labelled by the
predictor's name beside the feedback; and an invalid one's reason and fix."""

from __future__ import annotations

import pytest

from checks import services as check_services
from checks.models import Check
from contract.engine import run_check
from jobs import sandbox_pool

pytestmark = pytest.mark.django_db

VALID = """\
def score(input, output, expected=None):
    return 0.5, {
        "feedback": "General: name the label.",
        "predictor_feedback": {
            "classify.predict": "Answer with the label alone.",
            "explain": "Quote the words that show a bug.",
        },
    }
"""
INVALID = """\
def score(input, output, expected=None):
    return 0.5, {"feedback": "Close.", "predictor_feedback": {"classify": "  "}}
"""


def _stored(owner, source: str) -> Check:
    result = run_check(source, timeout_s=20, sandbox_config=sandbox_pool.base_config())
    check = check_services.check_create(owner=owner, source=source)
    check.status = Check.Status.PASSED if result.passed else Check.Status.FAILED
    check.result = result.to_dict()
    check.save()
    return check


def test_each_predictors_feedback_is_shown_by_its_name(owner_client, owner):
    check = _stored(owner, VALID)
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert body.count('class="predictor-feedback"') == 3  # one list a case
    assert "<code>classify.predict</code>" in body
    assert "Answer with the label alone." in body
    assert "<code>explain</code>" in body and "Quote the words that show a bug." in body
    # After the case's general feedback, in its cell.
    row = body[body.index('id="case-1"') :]
    cell = row[row.index('class="feedback"') :]
    assert cell.index("General: name the label.") < cell.index("classify.predict")
    assert cell.index("classify.predict") < cell.index("Quote the words")
    assert "more predictor" not in body


def test_a_stored_result_without_it_shows_no_list(owner_client, owner):
    check = _stored(owner, 'def score(input, output):\n    return 1.0, {"feedback": "OK"}\n')
    for case in check.result["cases"]:
        case.pop("predictor_feedback", None)  # as stored before the key existed
        case.pop("predictor_feedback_omitted", None)
    check.save()
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert 'class="predictor-feedback"' not in body


def test_an_empty_predictor_feedback_is_refused_with_its_reason_and_fix(owner_client, owner):
    check = _stored(owner, INVALID)
    assert check.result["failed_stage"] == "return_value"
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "No. The feedback of the predictor classify is empty." in body
    assert "return 0.5, {&quot;feedback&quot;: &quot;Close.&quot;}" in body
