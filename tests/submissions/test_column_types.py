"""Column types through the test client: the wizard's dataset step shows each column's
type as read and takes another, the contract check's sample cases, an evaluation's cases
and a run's cases carry the declared types, and a CSV file and a JSON Lines file of the
same data give the metric the same Python values."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace

import pytest
from django.apps import apps

from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation, EvaluationCase
from evaluations.presenters import failure_text
from evaluations.selection import default_selection
from evaluations.services import evaluation_create
from metrics import services as metric_services
from runs.execution import _splits
from submissions import datasets, rules, services
from submissions.models import Dataset
from tests.submissions.test_submit_wizard import (
    artifact_data,
    dataset_data,
    models_data,
    run_check_now,
    upload,
    url,
)

pytestmark = pytest.mark.django_db

QUESTIONS = [
    ("What is 3 + 4?", 7, {"level": 1}, "easy"),
    ("What is 10 - 13?", -3, {"level": 1}, "easy"),
    ("What is 6 * 7?", 42, {"level": 2}, "fine"),
    ("What is 9 / 3?", 3, {"level": 2}, "fine"),
    ("What is 2 ** 10?", 1024, {"level": 3}, "hard"),
    ("What is 15 % 4?", 3, {"level": 3}, "hard"),
    ("What is 100 / 4?", 25, {"level": 2}, "fine"),
    ("What is 8 + 8?", 16, {"level": 1}, "easy"),
    ("What is 5 * 5?", 25, {"level": 1}, "easy"),
    ("What is 81 / 9?", 9, {"level": 2}, "fine"),
]
COLUMNS = ["question", "answer", "meta", "notes"]
ROLES = {"question": "input", "answer": "output", "meta": "input", "notes": "ignore"}
AS_READ = {"question": "text", "answer": "number", "meta": "json", "notes": "text"}


def _csv_cell(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"') else text


SUMS_CSV = "question,answer,meta,notes\n" + "".join(
    ",".join(_csv_cell(value) for value in row) + "\n" for row in QUESTIONS
)
SUMS_JSONL = "".join(json.dumps(dict(zip(COLUMNS, row, strict=True))) + "\n" for row in QUESTIONS)

# Says what Python types the answer and the meta reach it as: 1.0 for an int and a dict.
TYPES_METRIC = """def score(input, output, expected=None):
    kinds = f"{type(expected['answer']).__name__} {type(input['meta']).__name__}"
    right = 1.0 if kinds == "int dict" else 0.0
    return right, {"feedback": f"answer and meta arrive as {kinds}"}
"""
# Any program: it only has to return something for the metric to score.
ECHO_PROGRAM = """def run(artifact, input):
    return input["question"]
"""
# Scores a recorded output: 1.0 when it is the expected int.
RECORDED_METRIC = """def score(input, output, expected=None):
    kinds = f"{type(output).__name__} {type(expected['answer']).__name__}"
    right = 1.0 if kinds == "int int" and output == expected["answer"] else 0.0
    return right, {"feedback": f"output and answer arrive as {kinds}"}
"""


@pytest.fixture
def types_metric(owner):
    metric = metric_services.metric_create(owner=owner, name="types", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=TYPES_METRIC)
    return version


def typed_data(columns, roles: dict, types: dict, **changes) -> dict:
    """The dataset step's post: dataset_data's, with a type for each column."""
    data = dataset_data(columns, roles, **changes)
    for index, column in enumerate(columns):
        if column in types:
            data[f"type_{index}"] = types[column]
    return data


def uploaded(client, draft, text: str = SUMS_CSV, name: str = "sums.csv"):
    assert (
        client.post(url(draft, "artifact"), artifact_data(source=ECHO_PROGRAM)).status_code == 302
    )
    assert upload(client, draft, text.encode(), name=name).status_code == 302
    draft.refresh_from_db()
    return draft


def to_check(client, draft, version, types: dict | None = None):
    """Steps 1 to 4, the dataset's columns of the given types (the types as read)."""
    uploaded(client, draft)
    response = client.post(
        url(draft, "dataset"), typed_data(COLUMNS, ROLES, types or AS_READ, action="next")
    )
    assert response.status_code == 302, response.content.decode()
    response = client.post(
        url(draft, "metric"),
        {"metric_mode": "saved", "metric_version": version.pk, "action": "next"},
    )
    assert response.status_code == 302
    assert client.post(url(draft, "models"), models_data()).status_code == 302
    draft.refresh_from_db()
    return draft


# -- the dataset step ---------------------------------------------------------------


def test_the_dataset_step_shows_each_columns_type_as_read(owner_client, draft):
    uploaded(owner_client, draft)
    assert draft.dataset.inferred_types == AS_READ
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert page.count('class="column-type"') == 4
    assert '<label class="visually-hidden" for="id_type_1">Type of answer</label>' in page
    assert "As read: Number" in page and "As read: JSON" in page and "As read: Text" in page
    select = page.split('name="type_1"')[1].split("</select>")[0]
    assert '<option value="number" selected>Number</option>' in select
    assert '<option value="text">Text</option>' in select
    # The preview shows the values as the metric gets them.
    assert '<td class="num">1024</td>' in page
    assert '<td class="json"><code>{&quot;level&quot;:1}</code></td>' in page


def test_a_changed_type_is_saved_and_the_preview_follows_it(owner_client, draft):
    uploaded(owner_client, draft)
    types = {**AS_READ, "answer": "text", "meta": "text"}
    response = owner_client.post(
        url(draft, "dataset"), typed_data(COLUMNS, ROLES, types, action="save")
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.column_types == types
    assert datasets.column_types(draft.dataset, draft.column_types) == types
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert '<option value="text" selected>Text</option>' in page.split('name="type_1"')[1]
    assert "As read: Number" in page  # the type as read is still said
    assert '<td class="num">' not in page and "<td>1024</td>" in page
    assert "<td>{&quot;level&quot;: 1}</td>" in page  # the CSV cell, as written


def test_a_value_that_does_not_fit_its_type_is_refused_with_its_row_and_column(owner_client, draft):
    uploaded(owner_client, draft)
    roles = {**ROLES, "notes": "input"}
    types = {**AS_READ, "notes": "number"}
    response = owner_client.post(url(draft, "dataset"), typed_data(COLUMNS, roles, types))
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        "Row 2 of the column notes holds “easy”, which is not a number (numbers are written "
        "like 7, -3, 2.5 or 1e3, without thousands separators). Fix the cell, or make the "
        "column&#x27;s type Text." in page
    )
    # The preview marks the cells that do not fit the type posted.
    assert 'easy <span class="cell-note">(does not fit the column\'s type)</span>' in page
    draft.refresh_from_db()
    assert draft.column_types == {} and draft.roles == {
        "question": "input",
        "answer": "output",
        "meta": "input",
        "notes": "ignore",
    }


def test_a_post_without_types_keeps_the_types_as_read(owner_client, draft):
    uploaded(owner_client, draft)
    response = owner_client.post(url(draft, "dataset"), dataset_data(COLUMNS, ROLES))
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.column_types == AS_READ


def test_a_csv_and_a_jsonl_file_of_the_same_data_give_the_same_sample_cases(
    owner_client, owner, draft
):
    samples, rows = [], []
    for text, name in ((SUMS_CSV, "sums.csv"), (SUMS_JSONL, "sums.jsonl")):
        one = services.draft_create(owner=owner) if samples else draft
        uploaded(owner_client, one, text, name)
        assert one.dataset.format == name.rsplit(".", 1)[1]
        assert one.dataset.inferred_types == AS_READ
        response = owner_client.post(url(one, "dataset"), typed_data(COLUMNS, ROLES, AS_READ))
        assert response.status_code == 302
        one.refresh_from_db()
        samples.append(one.dataset_facts["sample_cases"])
        rows.append(one.dataset_facts["sample_rows"])
    assert samples[0] == samples[1]
    # The rows are numbered alike: from the first data row, the CSV's header no row.
    assert rows[0] == rows[1] and all(1 <= row <= len(QUESTIONS) for row in rows[0])
    answers = [case["expected"]["answer"] for case in samples[0]]
    assert all(type(answer) is int for answer in answers)
    assert all(type(case["input"]["meta"]) is dict for case in samples[0])


# -- the contract check ---------------------------------------------------------------


def test_the_check_gets_the_declared_types_and_a_changed_type_makes_it_stale(
    owner_client, draft, types_metric, session_models, django_capture_on_commit_callbacks
):
    to_check(owner_client, draft, types_metric)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    # What the check is given: the sample cases, their values typed.
    assert all(type(case["expected"]["answer"]) is int for case in check.cases)
    assert all(type(case["input"]["meta"]) is dict for case in check.cases)
    # What the metric received, in its own words.
    assert check.status == "passed", check.result
    feedback = {case["feedback"] for case in check.result["cases"]}
    assert feedback == {"answer and meta arrive as int dict"}
    draft.refresh_from_db()
    assert rules.check_state(draft) == "passed"
    review = owner_client.get(url(draft, "review")).content.decode()
    assert "<code>answer</code>: Output · Number" in review
    assert services.run_config(draft)["dataset"]["types"] == AS_READ

    # The type of a column the metric never gets changes nothing it ran.
    ignored = {**AS_READ, "notes": "json"}
    owner_client.post(url(draft, "dataset"), typed_data(COLUMNS, ROLES, ignored, action="save"))
    draft.refresh_from_db()
    assert draft.column_types["notes"] == "json" and rules.check_state(draft) == "passed"

    declared = {**AS_READ, "answer": "text"}
    response = owner_client.post(
        url(draft, "dataset"), typed_data(COLUMNS, ROLES, declared, action="save")
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.column_types["answer"] == "text"
    assert rules.check_state(draft) == "stale"
    page = owner_client.get(url(draft, "check")).content.decode()
    # What changed, named: not "something".
    assert "Changed since the last check: the type of column answer." in page
    assert 'id="to-review" disabled' in page

    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert all(type(case["expected"]["answer"]) is str for case in check.cases)
    feedback = {case["feedback"] for case in check.result["cases"]}
    assert feedback == {"answer and meta arrive as str dict"}


# -- evaluations ------------------------------------------------------------------------


def test_a_draft_evaluation_scores_cases_of_the_declared_types(
    owner_client, draft, types_metric, session_models, django_capture_on_commit_callbacks
):
    to_check(owner_client, draft, types_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(
            f"/en/submit/{draft.pk}/evaluate/", {"split": "all", "count": "every", "second": ""}
        )
    assert response.status_code == 302, response.content.decode()
    evaluation = Evaluation.objects.get(draft=draft)
    assert evaluation.column_types == AS_READ
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert len(cases) == 10 and all(case.score == 1.0 for case in cases)
    assert cases[1].case["expected"] == {"answer": -3}
    assert cases[1].case["input"]["meta"] == {"level": 1}


RECORDED_CSV = "question,answer,output\n" + "".join(
    f"q{i},{i},{i if i % 2 else f'{i}.0'}\n" for i in range(1, 9)
)


@pytest.fixture
def recorded_metric(owner):
    metric = metric_services.metric_create(owner=owner, name="recorded", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=RECORDED_METRIC)
    return version


def playground_data(dataset, version, types: dict | None = None) -> dict:
    data = {
        "dataset": dataset.pk,
        "version": version.pk,
        "recorded_column": "output",
        "split": "all",
        "count": "every",
        "sample": "200",
        "sample_seed": "0",
        "split_mode": "ratio",
        "second": "",
        "second_version": "",
        "role_0": "input",
        "role_1": "output",
        "role_2": "ignore",
    }
    for index, column in enumerate(dataset.columns):
        if types and column in types:
            data[f"type_{index}"] = types[column]
    return data


def test_the_playground_offers_the_types_and_scores_with_them(
    owner_client, owner, recorded_metric, django_capture_on_commit_callbacks
):
    dataset = services.dataset_create(owner=owner, filename="rec.csv", data=RECORDED_CSV.encode())
    # "2.0" is a float as written, so the recorded outputs read as numbers too.
    assert dataset.inferred_types == {"question": "text", "answer": "number", "output": "number"}
    metric_url = f"/en/metrics/{recorded_metric.metric_id}/evaluate/"
    page = owner_client.get(f"{metric_url}?dataset={dataset.pk}").content.decode()
    assert page.count('class="column-type"') == 3 and "As read: Number" in page
    assert '<td class="num">2.0</td>' in page

    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(metric_url, playground_data(dataset, recorded_metric))
    assert response.status_code == 302, response.content.decode()
    evaluation = Evaluation.objects.get()
    assert evaluation.column_types == dataset.inferred_types
    execute_evaluation(evaluation.pk)
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    # Odd rows record an int, right; even rows a float, "2.0", which is no int.
    assert [case.score for case in cases] == [1.0, 0.0] * 4
    assert cases[0].case["output"] == 1 and cases[1].case["output"] == 2.0
    assert cases[1].feedback == "output and answer arrive as float int"


def test_the_playground_refuses_a_value_that_does_not_fit_its_type(
    owner_client, owner, recorded_metric, django_capture_on_commit_callbacks
):
    dataset = services.dataset_create(owner=owner, filename="rec.csv", data=RECORDED_CSV.encode())
    metric_url = f"/en/metrics/{recorded_metric.metric_id}/evaluate/"
    data = playground_data(dataset, recorded_metric, {"question": "number"})
    response = owner_client.post(metric_url, data)
    assert response.status_code == 400
    assert "Row 2 of the column question holds “q1”, which is not a number" in (
        response.content.decode()
    )
    assert not Evaluation.objects.exists()
    # Declared text, the recorded outputs reach the metric as strs.
    data = playground_data(dataset, recorded_metric, {"output": "text", "answer": "text"})
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(metric_url, data)
    assert response.status_code == 302
    evaluation = Evaluation.objects.get()
    assert evaluation.column_types["output"] == "text"
    execute_evaluation(evaluation.pk)
    case = EvaluationCase.objects.filter(evaluation=evaluation).order_by("index").first()
    assert case.case["output"] == "1" and case.feedback == "output and answer arrive as str str"


def test_an_evaluation_stops_at_a_value_that_does_not_fit_saying_where(owner):
    dataset = services.dataset_create(owner=owner, filename="rec.csv", data=RECORDED_CSV.encode())
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles={"question": "input", "answer": "output"},
        column_types={"question": "json"},
        recorded_column="output",
        total=dataset.row_count,
        source=RECORDED_METRIC,
        timeout_s=10,
    )
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED
    assert evaluation.failure == "dataset_problem"
    assert evaluation.failure_params == {
        "code": "not_json",
        "params": {"value": "q1", "row": 2, "column": "question"},
    }
    assert "Row 2 of the column question holds “q1”, which is not JSON." in failure_text(evaluation)


# -- runs, and what was stored before column types ---------------------------------------


def test_a_runs_cases_carry_its_types_and_an_older_runs_the_values_as_read(owner):
    dataset = services.dataset_create(owner=owner, filename="sums.csv", data=SUMS_CSV.encode())
    config = {
        "dataset": {
            "columns": ROLES,
            "types": AS_READ,
            "splits": {"rows": {"train": [0, 1], "validation": [2]}},
        }
    }
    train, val = _splits(SimpleNamespace(config=config, dataset_id=dataset.pk))
    assert train[0] == {
        "input": {"question": "What is 3 + 4?", "meta": {"level": 1}},
        "expected": {"answer": 7},
        "row": 0,
    }
    assert val[0]["expected"] == {"answer": 42}
    del config["dataset"]["types"]  # submitted, and checked, before column types
    train, _ = _splits(SimpleNamespace(config=config, dataset_id=dataset.pk))
    assert train[0]["expected"] == {"answer": "7"}
    assert train[0]["input"]["meta"] == '{"level": 1}'


def test_a_dataset_and_draft_from_before_column_types_keep_the_files_types(owner_client, draft):
    uploaded(owner_client, draft)
    Dataset.objects.filter(pk=draft.dataset_id).update(inferred_types={})
    draft.refresh_from_db()
    assert draft.column_types == {}
    # Nothing stored: the types are read from the rows.
    assert datasets.column_types(draft.dataset, draft.column_types) == AS_READ
    migration = importlib.import_module("submissions.migrations.0005_column_types")
    migration.infer_stored_types(apps, None)
    draft.dataset.refresh_from_db()
    assert draft.dataset.inferred_types == AS_READ


def test_every_dataset_code_has_words_and_the_type_codes_say_where():
    from django.utils import translation

    import dataset_files
    from wording import words
    from wording.datasets import DATASET_ERRORS

    assert set(dataset_files.ERROR_CODES) <= set(DATASET_ERRORS)
    with translation.override("en"):
        said = words("not_json", {"row": 4, "column": "meta", "value": "{a"}, family="dataset")
        assert said.startswith("Row 4 of the column meta holds “{a”, which is not JSON.")
        said = words("bad_type", {"column": "meta", "type": "integer"}, family="step")
        assert said == "integer is not a column type; use Number, Text or JSON."
