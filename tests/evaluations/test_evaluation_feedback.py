"""The feedback report on an evaluation's page: the same words repeated where they say too
little are counted; the same praise for outputs that all got the top score is not."""

from __future__ import annotations

import re
from html import unescape

import pytest

from evaluations.models import Evaluation
from evaluations.summary import summarize
from tests.evaluations.test_evaluation_pages import make_case, make_evaluation, summary

pytestmark = pytest.mark.django_db


def repeated(html: str) -> tuple[str, str]:
    """The report's line on repeated feedback: its label and its share."""
    found = re.search(r"<dt>([^<]*)</dt><dd id=\"feedback-repeated\">([^<]*)</dd>", html)
    return unescape(found.group(1)), found.group(2)


def test_praise_for_right_answers_is_not_reported_as_repeated_feedback(owner_client, owner):
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=13, done=13)
    # Six right answers praised alike, and seven others with feedback of their own.
    for index in range(6):
        make_case(
            evaluation,
            index,
            feedback="Correct.",
            feedback_kind="generic",
            feedback_digest="correct",
            output_digest=f"right {index}",
        )
    for index in range(6, 13):
        make_case(
            evaluation,
            index,
            score=0.5,
            feedback=f"Half right: case {index} misses the unit.",
            feedback_digest=f"own {index}",
            output_digest=f"half {index}",
        )
    Evaluation.objects.filter(pk=evaluation.pk).update(summary=summarize(evaluation))
    html = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    label, share = repeated(html)
    assert label == "The same for outputs that scored differently, or below the top score"
    assert share == "0.0%"  # not 46.2%: six of thirteen are the praise
    assert "The same praise for outputs that all got the top score is not counted." in html


def test_a_summary_from_before_is_not_shown_under_the_new_meaning(owner_client, owner):
    old = summary(version=1)
    old["feedback"] = {
        key: value for key, value in old["feedback"].items() if key != "repeated_share"
    }
    old["feedback"]["identical_share"] = 0.46
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=6, done=6, summary=old)
    html = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert repeated(html)[1] == "—" and "46.0%" not in html
