"""The wizard's gate for DSPy GEPA: a passed check whose metric gives "predictor_feedback"
to a name the program has no predictor of is refused, with the program's predictors
named (each case's run says them), since DSPy GEPA would never read that text."""

from __future__ import annotations

import pytest

from checks.models import Check
from metrics import services as metric_services
from runs.models import Run
from submissions import rules
from tests.submissions.test_submit_wizard import fill_to_check, run_check_now, url

pytestmark = pytest.mark.django_db

# Two predictors and no model call: dspy names them "classify" and "explain.predict".
PROGRAM = """import dspy


class Labeller(dspy.Module):
    def __init__(self):
        super().__init__()
        self.classify = dspy.Predict("question -> label")
        self.explain = dspy.ChainOfThought("question, label -> why")

    def forward(self, question):
        return dspy.Prediction(label="bug")


program = Labeller()
"""

METRIC = """def score(input, output, expected=None):
    return 0.5, {{
        "feedback": "Expected the ticket's own label.",
        "predictor_feedback": {{
            "classify": "Name one of billing, bug or account.",
            "{second}": "Say which words of the ticket point to its label.",
        }},
    }}
"""


def _version(owner, second: str):
    metric = metric_services.metric_create(owner=owner, name=second, starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=METRIC.format(second=second))
    return version


def test_a_name_the_program_has_no_predictor_of_shuts_the_gate_and_lists_its_predictors(
    owner_client, owner, draft, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, _version(owner, "explain"), kind="dspy", source=PROGRAM)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    # The contract holds: the check itself passed, and each case's run named the predictors.
    assert check.status == Check.Status.PASSED, check.result
    for row in check.result["cases"]:
        assert row["run"]["dspy"]["names"] == ["classify", "explain.predict"]
        assert set(row["predictor_feedback"]) == {"classify", "explain"}
    found = rules.problems(draft)
    assert found["check"].code == "predictor_feedback_unknown"
    assert found["check"].params == {"names": "explain", "predictors": "classify, explain.predict"}
    page = owner_client.get(url(draft, "check")).content.decode()
    assert (
        "&quot;predictor_feedback&quot; in the metric names explain, but program has no "
        "predictor of that name. Its predictors are: classify, explain.predict."
    ) in page
    assert 'id="to-review" disabled' in page
    # The submit is refused too.
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    assert not Run.objects.exists()


def test_the_programs_own_predictor_names_open_it(
    owner_client, owner, draft, session_models, django_capture_on_commit_callbacks
):
    version = _version(owner, "explain.predict")
    fill_to_check(owner_client, draft, version, kind="dspy", source=PROGRAM)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.status == Check.Status.PASSED, check.result
    assert "check" not in rules.problems(draft)
    page = owner_client.get(url(draft, "check")).content.decode()
    assert 'id="to-review" disabled' not in page
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    assert Run.objects.get().config["engine"]["resolved"] == "dspy_gepa"


def _result(*cases) -> dict:
    return {"cases": list(cases)}


def _case(given: dict | None, names: list | None) -> dict:
    run = {"status": "ok", "dspy": {"fields": {}, "trace": []}}
    if names is not None:
        run["dspy"]["names"] = names
    return {"status": "valid", "predictor_feedback": given, "run": run}


def test_the_problem_names_each_unknown_name_once_in_the_order_given():
    names = ["classify", "explain.predict"]
    result = _result(
        _case({"classify": "a", "explain": "b"}, names),
        _case({"summary": "c", "explain": "d"}, names),
        _case(None, names),
    )
    problem = rules.predictor_feedback_problem(result)
    assert problem is not None and problem.step == "check"
    assert problem.params == {
        "names": "explain, summary",
        "predictors": "classify, explain.predict",
    }
    assert rules.predictor_feedback_problem(_result(_case({"classify": "a"}, names))) is None
    # A check stored before the runs named their predictors, or without any such feedback.
    assert rules.predictor_feedback_problem(_result(_case({"x": "a"}, None))) is None
    assert rules.predictor_feedback_problem(_result(_case({}, names))) is None
    assert rules.predictor_feedback_problem({}) is None
