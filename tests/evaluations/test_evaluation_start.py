"""Starting an evaluation through the test client: from the playground (a dataset of
recorded outputs, chosen or uploaded there) and from a wizard draft; the rows chosen, the
second scoring, the refusals in words, ownership, bad input, and the other languages."""

from __future__ import annotations

import io
import re

import pytest
from django.urls import reverse

import dataset_files
from checks.models import Check
from evaluations import selection as evaluation_selection
from evaluations import start as evaluation_start
from evaluations.models import Evaluation
from evaluations.services import scaled_limits
from metrics import services as metric_services
from submissions import rules, services
from submissions.datasets import table_of
from submissions.models import Dataset
from tests.skynet_web.test_page_labels import missing_descriptions
from tests.submissions.test_submit_wizard import LABEL_METRIC, fill_to_check, url
from wording import format_usd

pytestmark = pytest.mark.django_db

RECORDED_CSV = (
    "ticket_id,question,label,output,split\n"
    "T-1,I was charged twice this month.,billing,billing,train\n"
    "T-2,The app crashes on the settings page.,bug,bug,train\n"
    "T-3,How do I change my email address?,account,billing,train\n"
    "T-4,My card was declined.,billing,billing,train\n"
    "T-5,The export button does nothing.,bug,account,train\n"
    "T-6,Can I get an invoice?,billing,billing,train\n"
    "T-7,I forgot my password.,account,account,validation\n"
    "T-8,Search results never load.,bug,bug,validation\n"
    "T-9,Please delete my account.,account,account,test\n"
    "T-10,The page is blank.,bug,bug,test\n"
    "T-11,Refund my last payment.,billing,bug,test\n"
)
COLUMNS = ["ticket_id", "question", "label", "output", "split"]
ROLES = {"ticket_id": "ignore", "question": "input", "label": "output", "output": "ignore"}


# -- the evaluation's own page ----------------------------------------------------


def detail_url(evaluation: Evaluation) -> str:
    return reverse("evaluations:detail", args=[evaluation.pk])


# -- helpers ----------------------------------------------------------------------


@pytest.fixture
def metric(saved_metric):
    return saved_metric.metric


@pytest.fixture
def dataset(owner):
    return services.dataset_create(owner=owner, filename="recorded.csv", data=RECORDED_CSV.encode())


def evaluate_url(metric) -> str:
    return f"/en/metrics/{metric.pk}/evaluate/"


def start_data(dataset, version, /, **changes) -> dict:
    data = {
        "dataset": dataset.pk,
        "version": version.pk,
        "recorded_column": "output",
        "split": "all",
        "count": "every",
        "sample": "200",
        "sample_seed": "0",
        "split_mode": "ratio",
        "train_percent": "60",
        "validation_percent": "20",
        "test_percent": "20",
        "seed": "7",
        "split_column": "",
        "second": "",
        "second_version": "",
    }
    for index, column in enumerate(dataset.columns):
        data[f"role_{index}"] = ROLES.get(column, "ignore")
    data.update(changes)
    return data


def start(client, metric, data, callbacks):
    with callbacks(execute=False) as sent:
        response = client.post(evaluate_url(metric), data)
    return response, sent


def body(response) -> str:
    return response.content.decode()


def check_with_costs(owner, version, costs, *, runs=None, status="passed") -> Check:
    """A finished check of `version` whose cases measured these metric costs (None: the
    case made no model call) and, for a wizard check, these run costs."""
    cases = []
    for index, cost in enumerate(costs):
        case = {"index": index, "status": "valid", "score": 1.0}
        case["usage"] = None if cost is None else {"model_calls": 1, "cost_usd": cost}
        if runs is not None:
            run_cost = runs[index]
            case["run"] = {
                "status": "ok",
                "usage": None if run_cost is None else {"model_calls": 1, "cost_usd": run_cost},
            }
        cases.append(case)
    return Check.objects.create(
        owner=owner,
        source=version.source,
        metric_version=version,
        status=status,
        result={"passed": True, "cases": cases},
    )


# -- the playground: choosing and uploading ----------------------------------------


def test_the_playground_links_to_the_evaluation_page(owner_client, metric):
    page = body(owner_client.get(f"/en/metrics/{metric.pk}/"))
    assert f'href="{evaluate_url(metric)}"' in page
    assert "Evaluate on a dataset" in page


def test_the_page_offers_the_users_own_datasets_newest_first(owner_client, owner, outsider, metric):
    services.dataset_create(owner=owner, filename="older.csv", data=b"q,a\n1,2\n")
    services.dataset_create(owner=owner, filename="newer.csv", data=RECORDED_CSV.encode())
    services.dataset_create(owner=outsider, filename="theirs.csv", data=b"q,a\n1,2\n")
    page = body(owner_client.get(evaluate_url(metric)))
    assert page.index("newer.csv · 11 rows") < page.index("older.csv · 1 row")
    assert "theirs.csv" not in page
    assert 'name="file"' in page  # or a new upload, right here
    assert 'name="recorded_column"' not in page  # the columns come once a dataset is chosen


def test_choosing_a_dataset_shows_its_columns_with_guessed_roles(owner_client, metric, dataset):
    page = body(owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"))
    assert "recorded.csv" in page and "I was charged twice this month." in page
    form = evaluation_start.guessed_settings(dataset)
    # "output" holds the recorded outputs: chosen as such, and so no input or expected.
    assert form["recorded_column"] == "output" and form["roles"]["output"] == "ignore"
    assert form["roles"]["label"] == "output" and form["roles"]["question"] == "input"
    assert form["split_column"] == "split"
    assert re.search(r'<option value="output" selected>output</option>', page)
    assert f'<option value="{metric.latest_version.pk}" selected>Version 2</option>' in page


def test_uploading_here_keeps_the_file_and_opens_its_columns(owner_client, owner, metric):
    handle = io.BytesIO(RECORDED_CSV.encode())
    handle.name = "fresh.csv"
    response = owner_client.post(f"{evaluate_url(metric)}upload/", {"file": handle})
    dataset = Dataset.objects.get(owner=owner, filename="fresh.csv")
    assert response.status_code == 302
    assert response["Location"] == f"{evaluate_url(metric)}?dataset={dataset.pk}"
    assert dataset.row_count == 11 and dataset.columns == COLUMNS
    page = body(owner_client.get(response["Location"]))
    assert "Uploaded. Mark the columns, then start the evaluation." in page
    assert 'name="role_4"' in page


def test_a_file_that_cannot_be_read_is_refused_in_words(owner_client, owner, metric):
    handle = io.BytesIO(b"\x00\x01\x02 not a table")
    handle.name = "broken.csv"
    response = owner_client.post(f"{evaluate_url(metric)}upload/", {"file": handle})
    assert response.status_code == 400
    assert 'class="errorlist"' in body(response)
    assert not Dataset.objects.filter(owner=owner).exists()
    empty = io.BytesIO(b"")
    empty.name = "empty.csv"
    response = owner_client.post(f"{evaluate_url(metric)}upload/", {"file": empty})
    assert response.status_code == 400 and "The file is empty." in body(response)


def test_an_upload_over_the_limit_is_stopped(owner_client, owner, metric, monkeypatch):
    monkeypatch.setattr(dataset_files, "MAX_BYTES", 100)
    handle = io.BytesIO(RECORDED_CSV.encode())
    handle.name = "big.csv"
    response = owner_client.post(f"{evaluate_url(metric)}upload/", {"file": handle})
    assert response.status_code == 400
    assert not Dataset.objects.filter(owner=owner).exists()


# -- the playground: starting -------------------------------------------------------


def test_starting_queues_an_evaluation_of_the_recorded_outputs(
    owner_client, owner, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    metric.reflection_model, metric.metric_model, metric.timeout_s = "openai/a", "openai/b", 17
    metric.save()
    response, sent = start(
        owner_client,
        metric,
        start_data(dataset, saved_metric, count="sample", sample="200"),
        django_capture_on_commit_callbacks,
    )
    evaluation = Evaluation.objects.get()
    assert response.status_code == 302 and response["Location"] == detail_url(evaluation)
    assert len(sent) == 1  # handed to the worker once the row is committed
    assert evaluation.owner == owner and evaluation.status == Evaluation.Status.QUEUED
    assert evaluation.dataset == dataset and evaluation.draft is None
    assert evaluation.metric_version == saved_metric and evaluation.source == LABEL_METRIC
    assert evaluation.recorded_column == "output"
    assert evaluation.roles == {**ROLES, "split": "ignore"}
    # A sample of 200 of 11 rows is every row.
    assert evaluation.total == 11
    assert evaluation.selection["split"] == "all" and evaluation.selection["sample"] == 200
    assert evaluation.second == "" and evaluation.second_source == ""
    assert evaluation.artifact is None and evaluation.task_model == ""
    assert (evaluation.reflection_model, evaluation.metric_model) == ("openai/a", "openai/b")
    assert evaluation.timeout_s == 17
    assert evaluation.projected["cases"] == 11 and evaluation.projected["usd"] is None
    assert evaluation.limits == scaled_limits(11)


def test_a_sample_of_n_rows_is_n_cases_drawn_by_its_seed(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(dataset, saved_metric, count="sample", sample="4", sample_seed="3")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    evaluation = Evaluation.objects.get()
    assert response.status_code == 302
    assert evaluation.total == 4
    assert evaluation.selection["sample"] == 4 and evaluation.selection["sample_seed"] == 3
    rows = evaluation_selection.select_rows(table_of(dataset), evaluation.selection)
    assert len(rows) == 4 and rows == sorted(rows)


def test_a_ratio_split_has_as_many_cases_as_its_rows(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(dataset, saved_metric, split="train")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    evaluation = Evaluation.objects.get()
    train = dataset_files.split_by_ratio(11, train=0.6, validation=0.2, test=0.2, seed=7)["train"]
    assert response.status_code == 302
    assert evaluation.total == len(train) == 7
    assert evaluation.selection == evaluation_selection.default_selection(
        split="train", mode="ratio", ratios=[60, 20, 20], seed=7, column=""
    )


def test_a_split_column_picks_the_rows_it_names(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(
        dataset, saved_metric, split="test", split_mode="column", split_column="split"
    )
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    evaluation = Evaluation.objects.get()
    assert response.status_code == 302
    assert evaluation.total == 3  # T-9, T-10, T-11
    assert evaluation.selection["mode"] == "column" and evaluation.selection["column"] == "split"


def test_scoring_twice_and_comparing_set_the_second_scoring(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    first = metric.versions.get(number=1)
    start(
        owner_client,
        metric,
        start_data(dataset, saved_metric, second="repeat"),
        django_capture_on_commit_callbacks,
    )
    repeat = Evaluation.objects.get()
    assert repeat.second == "repeat"
    assert repeat.second_source == LABEL_METRIC and repeat.second_version == saved_metric
    repeat.status = Evaluation.Status.DONE
    repeat.save()

    data = start_data(dataset, saved_metric, second="compare", second_version=first.pk)
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    compare = Evaluation.objects.exclude(pk=repeat.pk).get()
    assert response.status_code == 302
    assert compare.second == "compare"
    assert compare.second_source == first.source and compare.second_version == first


def test_comparing_needs_another_version(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    for other, message in (
        ("", "Choose the version to compare with."),
        (saved_metric.pk, "Choose a version other than the one evaluated."),
    ):
        data = start_data(dataset, saved_metric, second="compare", second_version=other)
        response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
        assert response.status_code == 400 and message in body(response)
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"count": "sample", "sample": "0"}, "greater than or equal to 1"),
        ({"count": "sample", "sample": "10000000000"}, "less than or equal to"),
        ({"count": "sample", "sample_seed": "seven"}, "Enter a whole number."),
        ({"split": "train", "seed": "x"}, "Enter a whole number."),
        ({"split": "train", "train_percent": "50"}, "add up to 100"),
        ({"recorded_column": ""}, "Choose the column that holds the recorded outputs."),
        ({"recorded_column": "nothing"}, "Select a valid choice."),
        ({"role_3": "output"}, "cannot also be an input or an expected column"),
        ({"role_1": "ignore"}, "Mark at least one column as Input."),
        ({"split": "test", "split_mode": "column", "split_column": ""}, "names each row"),
        ({"split": "test", "split_mode": "column", "split_column": "question"}, "ignored"),
        ({"split": "test", "split_mode": "column", "split_column": "label"}, "ignored"),
        ({"version": "999999"}, "Select a valid choice."),
        ({"split": "nowhere"}, "Select a valid choice."),
    ],
)
def test_bad_input_is_a_form_error_and_keeps_what_was_typed(
    owner_client,
    metric,
    saved_metric,
    dataset,
    django_capture_on_commit_callbacks,
    changes,
    message,
):
    response, sent = start(
        owner_client,
        metric,
        start_data(dataset, saved_metric, **changes),
        django_capture_on_commit_callbacks,
    )
    page = body(response)
    assert response.status_code == 400
    assert message in page
    assert not Evaluation.objects.exists() and not sent
    assert f'name="dataset" value="{dataset.pk}"' in page  # still this dataset's form
    for name, value in changes.items():
        if name.endswith("_percent") or name in ("sample", "sample_seed", "seed"):
            assert f'value="{value}"' in page


def test_a_split_column_whose_values_are_no_splits_is_a_form_error(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    # The ticket ids name no split: the column cannot split the rows.
    data = start_data(
        dataset,
        saved_metric,
        split="test",
        split_mode="column",
        split_column="ticket_id",
    )
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 400
    assert "Row 2 says T-1 in the column ticket_id" in body(response)
    assert not Evaluation.objects.exists()


# -- refusals -------------------------------------------------------------------------


def test_one_running_evaluation_at_a_time(
    owner_client, owner, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    Evaluation.objects.create(
        owner=owner, dataset=dataset, source="x", total=3, status=Evaluation.Status.RUNNING
    )
    response, sent = start(
        owner_client, metric, start_data(dataset, saved_metric), django_capture_on_commit_callbacks
    )
    assert response.status_code == 429
    assert "You already have 1 evaluation queued or running." in body(response)
    assert Evaluation.objects.count() == 1 and not sent
    assert 'value="output" selected' in body(response)  # the form is shown again


def test_starting_too_often_is_refused(
    owner_client, metric, saved_metric, dataset, settings, django_capture_on_commit_callbacks
):
    settings.EVALUATION_RATE_PER_MINUTE = 1
    response, _ = start(
        owner_client, metric, start_data(dataset, saved_metric), django_capture_on_commit_callbacks
    )
    assert response.status_code == 302
    Evaluation.objects.update(status=Evaluation.Status.DONE)
    response, _ = start(
        owner_client, metric, start_data(dataset, saved_metric), django_capture_on_commit_callbacks
    )
    assert response.status_code == 429
    assert "You have started 1 evaluation in the last minute." in body(response)
    assert Evaluation.objects.count() == 1


def test_an_evaluation_over_its_budget_is_refused_with_the_projection(
    owner_client, owner, metric, saved_metric, dataset, settings, django_capture_on_commit_callbacks
):
    check_with_costs(owner, saved_metric, [0.02, 0.01, None])  # $0.01 a case
    settings.EVALUATION_MAX_MODEL_USD = 0.05
    response, sent = start(
        owner_client, metric, start_data(dataset, saved_metric), django_capture_on_commit_callbacks
    )
    page = body(response)
    assert response.status_code == 400 and not sent
    assert "This evaluation would cost about $0.11 in model calls: 11 cases at $0.01 each" in page
    assert "Its budget is $0.05." in page
    assert not Evaluation.objects.exists()


def test_too_many_cases_are_refused(
    owner_client, metric, saved_metric, dataset, settings, django_capture_on_commit_callbacks
):
    settings.EVALUATION_MAX_CASES = 5
    response, _ = start(
        owner_client, metric, start_data(dataset, saved_metric), django_capture_on_commit_callbacks
    )
    assert response.status_code == 400
    assert "An evaluation scores at most 5 cases; the rows you chose make 11." in body(response)
    # A sample within the limit passes.
    data = start_data(dataset, saved_metric, count="sample", sample="5")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 302 and Evaluation.objects.get().total == 5


def test_an_empty_split_is_no_cases(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(dataset, saved_metric, split="test", train_percent="80", test_percent="0")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 400
    assert "These rows hold no case to score." in body(response)


# -- the cost shown before starting -----------------------------------------------------


def test_without_a_measured_cost_the_form_names_the_budget_instead(owner_client, metric, dataset):
    page = body(owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"))
    budget = format_usd(scaled_limits(11)["max_usd"])
    assert (
        "The cost could not be projected: no check has measured it; the evaluation is held "
        f"to a budget of {budget}." in page
    )


def test_with_a_measured_cost_the_form_projects_the_rows_chosen(
    owner_client, owner, metric, saved_metric, dataset
):
    check_with_costs(owner, saved_metric, [0.001, 0.002, 0.003])
    page = body(owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"))
    assert (
        "At $0.002 a case, as the latest check measured, 11 cases would cost about $0.022" in page
    )


def test_a_metric_that_calls_no_model_is_said_to_cost_nothing(
    owner_client, owner, metric, saved_metric, dataset
):
    check_with_costs(owner, saved_metric, [None, None, None])
    page = body(owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"))
    assert "Its latest check made no model call: scoring these cases costs nothing" in page
    assert "could not be projected" not in page


def test_a_case_costs_what_the_latest_finished_check_measured(owner, saved_metric):
    assert evaluation_start.metric_cost(saved_metric) is None  # no check yet
    check_with_costs(owner, saved_metric, [None, None, None])
    # Its cases ran and made no model call: a metric that costs nothing, not unmeasured.
    assert evaluation_start.metric_cost(saved_metric) == 0.0
    check = check_with_costs(owner, saved_metric, [0.03, None, 0.0], runs=[0.01, 0.02, None])
    assert evaluation_start.per_case_usd(check, with_run=False) == pytest.approx(0.01)
    assert evaluation_start.per_case_usd(check, with_run=True) == pytest.approx(0.02)
    # A check still running is not the latest measurement.
    check_with_costs(owner, saved_metric, [5.0], status="running")
    assert evaluation_start.metric_cost(saved_metric) == pytest.approx(0.01)
    # Cases that never ran cost nothing, and say nothing of what a case costs.
    check.result["cases"][1]["status"] = "skipped"
    assert evaluation_start.per_case_usd(check, with_run=False) == pytest.approx(0.015)


# -- a draft ----------------------------------------------------------------------------


def draft_evaluate_url(draft) -> str:
    return f"/en/submit/{draft.pk}/evaluate/"


def test_an_incomplete_draft_says_what_is_missing(owner_client, draft):
    response = owner_client.get(draft_evaluate_url(draft))
    page = body(response)
    assert response.status_code == 200
    assert "Finish these steps first" in page
    for step in ("artifact", "dataset", "metric", "models"):
        assert f'href="{url(draft, step)}"' in page
    assert "Upload a dataset." in page and "Pick the task model." in page
    response = owner_client.post(draft_evaluate_url(draft), {"split": "all", "count": "every"})
    assert response.status_code == 400 and not Evaluation.objects.exists()


def test_a_draft_evaluation_runs_its_artifact_on_its_split(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    draft = fill_to_check(owner_client, draft, saved_metric)
    check_page = body(owner_client.get(url(draft, "check")))
    assert f'href="{draft_evaluate_url(draft)}"' in check_page
    assert "Evaluate on the whole dataset" in check_page
    page = body(owner_client.get(draft_evaluate_url(draft)))
    assert "train (6 rows)" in page and "Every row (10 rows)" in page
    assert "by ratio, seed 7" in page

    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = owner_client.post(
            draft_evaluate_url(draft), {"split": "train", "count": "every", "second": ""}
        )
    evaluation = Evaluation.objects.get()
    assert response.status_code == 302 and response["Location"] == detail_url(evaluation)
    assert len(sent) == 1
    assert evaluation.draft == draft and evaluation.dataset == draft.dataset
    assert evaluation.artifact == rules.draft_artifact(draft).to_dict()
    assert evaluation.task_model == "openai/test-gpt"
    assert evaluation.reflection_model == "openai/test-gpt" and evaluation.metric_model == ""
    assert evaluation.source == LABEL_METRIC and evaluation.metric_version == saved_metric
    assert evaluation.roles == draft.roles and evaluation.recorded_column == ""
    assert evaluation.selection == evaluation_selection.default_selection(
        split="train", mode="ratio", ratios=[60, 20, 20], seed=7, column=""
    )
    assert evaluation.total == 6 and evaluation.second == ""
    assert evaluation.timeout_s == saved_metric.metric.timeout_s

    # The check step now shows it.
    check_page = body(owner_client.get(url(draft, "check")))
    assert f'href="{detail_url(evaluation)}"' in check_page
    assert "Latest evaluation:" in check_page and "0 of 6 cases" in check_page


def test_a_draft_sample_from_a_split_scored_twice(
    owner_client,
    owner,
    draft,
    saved_metric,
    session_models,
    django_capture_on_commit_callbacks,
):
    draft = fill_to_check(owner_client, draft, saved_metric)
    # The draft's own check measured the run and the metric: that is its cost.
    check = check_with_costs(owner, saved_metric, [0.001, 0.001, 0.001], runs=[0.002] * 3)
    draft.contract_check = check
    draft.save()
    page = body(owner_client.get(draft_evaluate_url(draft)))
    assert "At $0.003 a case" in page
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(
            draft_evaluate_url(draft),
            {
                "split": "all",
                "count": "sample",
                "sample": "4",
                "sample_seed": "9",
                "second": "repeat",
                "repeats": "2",
            },
        )
    evaluation = Evaluation.objects.get()
    assert response.status_code == 302
    assert evaluation.total == 4 and evaluation.selection["sample_seed"] == 9
    assert evaluation.second == "repeat" and evaluation.second_source == LABEL_METRIC
    # The run once ($0.002) and the metric at each of the two scorings ($0.001 each).
    assert evaluation.projected["per_case_usd"] == pytest.approx(0.004)


def test_a_draft_evaluation_can_be_refused_and_says_why(
    owner_client,
    owner,
    draft,
    saved_metric,
    session_models,
    django_capture_on_commit_callbacks,
):
    draft = fill_to_check(owner_client, draft, saved_metric)
    Evaluation.objects.create(owner=owner, dataset=draft.dataset, source="x", total=1)
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(draft_evaluate_url(draft), {"split": "test", "count": "every"})
    assert response.status_code == 429
    assert "You already have 1 evaluation queued or running." in body(response)
    bad = owner_client.post(
        draft_evaluate_url(draft), {"split": "test", "count": "sample", "sample": "-3"}
    )
    assert bad.status_code == 400 and "greater than or equal to 1" in body(bad)
    assert Evaluation.objects.count() == 1


# -- ownership ----------------------------------------------------------------------------


def test_another_users_metric_draft_and_dataset_do_not_exist_for_them(
    client, outsider, metric, saved_metric, dataset, draft
):
    client.force_login(outsider)
    theirs = metric_services.metric_create(owner=outsider, name="theirs", starter="exact_match")
    handle = io.BytesIO(RECORDED_CSV.encode())
    handle.name = "x.csv"
    answers = [
        client.get(evaluate_url(metric)),
        client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"),
        client.post(evaluate_url(metric), start_data(dataset, saved_metric)),
        client.post(f"{evaluate_url(metric)}upload/", {"file": handle}),
        client.get(draft_evaluate_url(draft)),
        client.post(draft_evaluate_url(draft), {"split": "all", "count": "every"}),
        # Their own metric, with the owner's dataset: the dataset is none of theirs.
        client.get(f"{evaluate_url(theirs)}?dataset={dataset.pk}"),
        client.post(evaluate_url(theirs), start_data(dataset, theirs.latest_version)),
        client.get(f"{evaluate_url(theirs)}?dataset=not-a-number"),
    ]
    assert [answer.status_code for answer in answers] == [404] * len(answers)
    assert not Evaluation.objects.exists()
    assert not Dataset.objects.filter(owner=outsider).exists()


def test_a_log_in_is_needed(client, metric, draft):
    for response in (
        client.get(evaluate_url(metric)),
        client.post(f"{evaluate_url(metric)}upload/"),
        client.get(draft_evaluate_url(draft)),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith("/en/accounts/login/")


# -- languages -------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["es", "hi"])
def test_the_pages_render_in_spanish_and_hindi(
    owner_client,
    owner,
    metric,
    saved_metric,
    dataset,
    draft,
    language,
    settings,
    django_capture_on_commit_callbacks,
):
    page = owner_client.get(f"/{language}/metrics/{metric.pk}/evaluate/?dataset={dataset.pk}")
    assert page.status_code == 200 and f'lang="{language}"' in body(page)
    assert owner_client.get(f"/{language}/submit/{draft.pk}/evaluate/").status_code == 200
    # A refusal's amounts are written as the reader writes numbers.
    check_with_costs(owner, saved_metric, [0.25, 0.25, 0.25])
    settings.EVALUATION_MAX_MODEL_USD = 1.5
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(
            f"/{language}/metrics/{metric.pk}/evaluate/", start_data(dataset, saved_metric)
        )
    assert response.status_code == 400
    amount = {"es": "$2,75", "hi": "$2.75"}[language]
    assert amount in body(response)


def test_every_description_on_the_evaluation_pages_exists(
    owner_client, metric, saved_metric, dataset, draft, session_models
):
    bad = start_data(
        dataset, saved_metric, count="sample", sample="0", split="train", seed="y", second="compare"
    )
    pages = [
        owner_client.get(evaluate_url(metric)),
        owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}"),
        owner_client.post(evaluate_url(metric), bad),
    ]
    draft = fill_to_check(owner_client, draft, saved_metric)
    pages.append(owner_client.get(draft_evaluate_url(draft)))
    pages.append(owner_client.post(draft_evaluate_url(draft), {"count": "sample", "sample": "0"}))
    assert [page.status_code for page in pages] == [200, 200, 400, 200, 400]
    assert [missing_descriptions(body(page)) for page in pages] == [[]] * 5


def test_the_wizards_link_to_measure_a_judges_noise_opens_with_repeats_chosen(
    owner_client, draft, saved_metric, session_models
):
    draft = fill_to_check(owner_client, draft, saved_metric)
    page = body(owner_client.get(draft_evaluate_url(draft) + "?second=repeat&repeats=4"))
    assert '<input type="radio" name="second" value="repeat" id="id_second_1" checked>' in page
    assert 'name="repeats" value="4"' in page
    # Anything else in the address is left out: the form's own first values.
    plain = body(owner_client.get(draft_evaluate_url(draft) + "?second=compare&repeats=9"))
    assert 'name="repeats" value="3"' in plain
