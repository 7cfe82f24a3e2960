"""An evaluation run in this process, in real sandboxes, on a real database: rows chosen,
every case scored and written, the summary made, and each way it can stop."""

from __future__ import annotations

import pytest

from evaluations.execution import evaluation_claim, execute_evaluation
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from evaluations.services import evaluation_create
from tests.evaluations.evaluation_data import LABEL_METRIC, make_dataset

pytestmark = pytest.mark.django_db

RANDOM_METRIC = """
import random

def score(input, output, expected=None):
    value = random.random()
    return value, {"feedback": f"drew {value:.6f}"}
"""
LENIENT_METRIC = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'fine'}\n"


def run(owner, dataset, source=LABEL_METRIC, **kw) -> Evaluation:
    selection = kw.pop("selection", default_selection())
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=selection,
        roles={"question": "input", "label": "output"},
        recorded_column=kw.pop("recorded_column", "output"),
        total=kw.pop("total", dataset.row_count),
        source=source,
        timeout_s=10,
        **kw,
    )
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    return evaluation


def test_every_row_is_scored_written_and_summarized(owner):
    dataset = make_dataset(owner, 40)
    evaluation = run(owner, dataset)
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    assert evaluation.done == evaluation.total == 40
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert [c.index for c in cases] == list(range(40))
    # make_dataset: every 4th output is right, every 10th raises, row 5 returns no pair.
    statuses = {c.index: c.status for c in cases}
    assert statuses[0] == "valid" and cases[0].score == 1.0
    assert statuses[1] == "valid" and cases[1].score == 0.0
    assert (
        cases[1].feedback == "Expected 'bug', got 'other'." and cases[1].feedback_kind == "specific"
    )
    assert statuses[10] == "error" and cases[10].exception_type == "KeyError"
    assert statuses[5] == "invalid" and cases[5].problem == "not_a_pair"
    # What came back is named, and its corrected return built from its own value.
    assert cases[5].params["shape"] == {"kind": "number", "type": "float", "value": "0.5"}
    assert cases[5].params["fix"] == 'return 0.5, {"feedback": "..."}'
    assert cases[3].file_row == 5  # the header is row 1 of the file
    assert cases[3].case["input"] == {"question": "question 3"}
    assert cases[3].case["expected"] == {"label": "other"}
    assert all(c.total_ms > 0 and c.metric_ms is not None for c in cases if c.status == "valid")
    summary = evaluation.summary
    assert summary["cases"] == 40
    assert summary["counts"]["error"] == 3 and summary["counts"]["invalid"] == 1
    assert summary["counts"]["valid"] == 36
    assert evaluation.progress["counts"] == {"valid": 36, "error": 3, "invalid": 1}


def test_a_seeded_sample_is_the_same_rows_every_time(owner):
    dataset = make_dataset(owner, 100)
    selection = default_selection(sample=7, sample_seed=42)
    first = run(owner, dataset, selection=selection, total=7)
    second = run(owner, dataset, selection=selection, total=7)
    rows = [
        list(
            EvaluationCase.objects.filter(evaluation=e)
            .order_by("index")
            .values_list("row", flat=True)
        )
        for e in (first, second)
    ]
    assert len(rows[0]) == 7 and rows[0] == rows[1] == sorted(rows[0])
    other = run(owner, dataset, selection=default_selection(sample=7, sample_seed=43), total=7)
    assert (
        list(EvaluationCase.objects.filter(evaluation=other).values_list("row", flat=True))
        != rows[0]
    )


def test_a_split_is_the_rows_the_wizard_splits_off(owner):
    dataset = make_dataset(owner, 20)
    selection = default_selection(split="test", ratios=[50, 25, 25], seed=3)
    evaluation = run(owner, dataset, selection=selection, total=5)
    assert evaluation.status == Evaluation.Status.DONE and evaluation.done == 5


def test_a_metric_that_uses_random_is_flagged_flaky_on_every_case(owner):
    evaluation = run(owner, make_dataset(owner, 12), source=RANDOM_METRIC, second="repeat")
    assert evaluation.second_source == RANDOM_METRIC
    cases = EvaluationCase.objects.filter(evaluation=evaluation)
    assert cases.count() == 12 and all(c.differs for c in cases)
    assert all(c.second["score"] != c.score and c.gap > 0 for c in cases)
    assert evaluation.summary["flaky"]["count"] == 12

    steady = run(owner, make_dataset(owner, 12), second="repeat")
    assert not EvaluationCase.objects.filter(evaluation=steady, differs=True).exists()
    assert steady.summary["flaky"]["count"] == 0


def test_two_versions_are_compared_on_the_same_outputs(owner):
    evaluation = run(owner, make_dataset(owner, 8), second="compare", second_source=LENIENT_METRIC)
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert [c.second_score for c in cases if c.second_status == "valid"] == [1.0] * 8
    disagree = [c.index for c in cases if c.differs]
    # Rows 0 and 4 are right (1.0 both); the others score 0.0, raise or are invalid.
    assert 0 not in disagree and 4 not in disagree and 1 in disagree
    assert evaluation.summary["agreement"]["n"] >= 1


def test_a_metric_that_does_not_load_ends_it_with_the_reason(owner):
    evaluation = run(owner, make_dataset(owner, 10), source="def score(x):\n    return 1.0\n")
    assert evaluation.status == Evaluation.Status.FAILED
    assert evaluation.failure == "load_failed"
    assert evaluation.failure_params["stage"] == "signature"
    assert evaluation.summary is not None


def test_cancelled_before_it_started_it_scores_nothing(owner):
    dataset = make_dataset(owner, 10)
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=10,
        source=LABEL_METRIC,
    )
    Evaluation.objects.filter(pk=evaluation.pk).update(cancel_requested=True)
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED and evaluation.failure == "cancelled"
    assert evaluation.done == 0


def test_a_redelivered_message_does_nothing(owner):
    evaluation = run(owner, make_dataset(owner, 3))
    assert evaluation_claim() is None  # nobody waits
    execute_evaluation(evaluation.pk)
    assert EvaluationCase.objects.filter(evaluation=evaluation).count() == 3


def test_a_dataset_problem_ends_it_with_the_code(owner):
    dataset = make_dataset(owner, 10)
    evaluation = run(
        owner, dataset, selection=default_selection(split="test", mode="column", column="nope")
    )
    assert evaluation.status == Evaluation.Status.FAILED and evaluation.failure == "dataset_problem"
    assert evaluation.failure_params["code"] == "unknown_column"


def test_a_draft_evaluation_runs_the_artifact_and_scores_what_it_returned(owner):
    from contract.artifacts import Artifact

    program = Artifact.python(
        "def run(artifact, input):\n    return 'billing' if input['question'].endswith('0') else 'x'\n"
    )
    evaluation = run(owner, make_dataset(owner, 6), artifact=program, recorded_column="")
    assert evaluation.status == Evaluation.Status.DONE
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert cases[0].score == 1.0 and cases[0].case["output"] == "'billing'"
    assert cases[1].score == 0.0 and cases[1].run_ms is not None
    assert cases[1].detail["run"]["status"] == "ok"


JUDGE = """
from skynet import llm


def score(input, output, expected=None):
    verdict = llm("Judge: " + output)
    return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
"""


def test_the_worker_measures_each_cases_task_and_metric_model_cost(owner, session_models):
    from contract.artifacts import Artifact

    program = Artifact.python(
        "from skynet import llm\n\n\ndef run(artifact, input):\n"
        "    return llm('Answer: ' + input['question'])\n"
    )
    evaluation = run(
        owner,
        make_dataset(owner, 5),
        source=JUDGE,
        artifact=program,
        recorded_column="",
        task_model="openai/test-gpt",
        metric_model="openai/test-gpt",
    )
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation))
    assert len(cases) == 5
    # One call each, priced from the catalogue ($2 in, $8 out a million tokens).
    assert all(c.model_calls == 2 and c.task_usd > 0 and c.metric_usd > 0 for c in cases)
    cost = evaluation.summary["cost"]
    assert cost["model_calls_total"] == 10
    assert cost["task_usd_total"] == pytest.approx(sum(c.task_usd for c in cases))
    assert evaluation.progress["model_calls"] == 10


def test_a_split_named_by_a_column_is_read_from_the_stored_rows(owner):
    from submissions.services import dataset_create

    lines = ["question,label,output,split"]
    lines += [f"q{i},billing,billing,{'test' if i % 3 == 0 else 'train'}" for i in range(30)]
    dataset = dataset_create(owner=owner, filename="s.csv", data="\n".join(lines).encode())
    selection = default_selection(split="test", mode="column", column="split")
    evaluation = run(owner, dataset, selection=selection, total=10)
    assert evaluation.status == Evaluation.Status.DONE and evaluation.done == 10
    rows = EvaluationCase.objects.filter(evaluation=evaluation).order_by("index")
    assert list(rows.values_list("row", flat=True)) == list(range(0, 30, 3))
    assert rows[1].case["input"] == {"question": "q3"}


def test_stored_rows_are_decoded_one_at_a_time_in_order():
    from evaluations.stored_rows import iter_rows, pick

    text = '[{"a": 1}, {"a": [2, ", ]"]},\n {"a": "x"} ]'
    assert list(iter_rows(text)) == [{"a": 1}, {"a": [2, ", ]"]}, {"a": "x"}]
    assert list(iter_rows("[]")) == [] and list(iter_rows(" [ ] ")) == []
    assert list(pick(iter_rows(text), [0, 2])) == [(0, {"a": 1}), (2, {"a": "x"})]
    assert list(pick(iter_rows(text), [])) == []
