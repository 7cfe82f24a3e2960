"""The whole flow as a browser without JavaScript makes it, then with htmx: upload a
dataset from the playground, start an evaluation, follow it, read the results, the
invalid cases and the download. The worker's part runs in this process, in real
sandboxes (evaluations.execution, what the task calls)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation
from tests.evaluations.evaluation_data import LABEL_METRIC, LABELS, output_of

pytestmark = pytest.mark.django_db

ROWS = 30


def csv_upload():
    from django.core.files.uploadedfile import SimpleUploadedFile

    lines = ["question,label,output"]
    lines += [f"question {i},{LABELS[i % 4]},{output_of(i)}" for i in range(ROWS)]
    return SimpleUploadedFile("tickets.csv", ("\n".join(lines) + "\n").encode(), "text/csv")


def start_form(dataset, version) -> dict:
    """What the start page's form posts when only the recorded column is chosen."""
    data = {
        "dataset": dataset.pk,
        "version": version.pk,
        "recorded_column": "output",
        "split": "all",
        "count": "every",
        "sample": "200",
        "sample_seed": "0",
        "split_mode": "ratio",
        "train_percent": "70",
        "validation_percent": "15",
        "test_percent": "15",
        "seed": "0",
        "split_column": "",
        "second": "",
        "second_version": "",
    }
    roles = {"question": "input", "label": "output", "output": "ignore"}
    for index, column in enumerate(dataset.columns):
        data[f"role_{index}"] = roles[column]
    return data


def started(owner_client, saved_metric, django_capture_on_commit_callbacks) -> Evaluation:
    from metrics import services as metric_services
    from submissions.models import Dataset

    metric = saved_metric.metric
    saved_metric, _ = metric_services.metric_save(metric, source=LABEL_METRIC)
    page = reverse("evaluations:start", args=[metric.pk])
    uploaded = owner_client.post(
        reverse("evaluations:start_upload", args=[metric.pk]), {"file": csv_upload()}
    )
    assert uploaded.status_code == 302
    dataset = Dataset.objects.get(owner=saved_metric.metric.owner)
    assert uploaded["Location"].endswith(f"?dataset={dataset.pk}")
    assert 'name="recorded_column"' in owner_client.get(uploaded["Location"]).content.decode()
    # The message to the worker is sent when the row is committed (not run here).
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = owner_client.post(page, start_form(dataset, saved_metric))
    assert len(sent) == 1
    evaluation = Evaluation.objects.get(owner=saved_metric.metric.owner)
    assert response.status_code == 302
    assert response["Location"] == reverse("evaluations:detail", args=[evaluation.pk])
    assert evaluation.total == ROWS and evaluation.status == Evaluation.Status.QUEUED
    return evaluation


def test_without_javascript(owner_client, saved_metric, django_capture_on_commit_callbacks):
    evaluation = started(owner_client, saved_metric, django_capture_on_commit_callbacks)
    detail = reverse("evaluations:detail", args=[evaluation.pk])
    waiting = owner_client.get(detail).content.decode()
    # Without JavaScript the page reloads itself while it waits, and offers Cancel.
    assert 'http-equiv="refresh"' in waiting
    assert reverse("evaluations:cancel", args=[evaluation.pk]) in waiting

    execute_evaluation(evaluation.pk)  # the worker's part
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE and evaluation.done == ROWS
    results = owner_client.get(detail).content.decode()
    assert 'http-equiv="refresh"' not in results
    assert "histogram-chart" in results and "KeyError" in results

    invalid = owner_client.get(reverse("evaluations:cases", args=[evaluation.pk]), {"invalid": 1})
    # Rows 10 and 20 raise, row 5 returns a bare float: three cases are not valid.
    table = invalid.content.decode().split("<tbody>")[1].split("</tbody>")[0]
    assert table.count("<tr") == 3
    download = owner_client.get(reverse("evaluations:download", args=[evaluation.pk, "csv"]))
    lines = b"".join(download.streaming_content).decode().strip().splitlines()
    assert len(lines) == ROWS + 1


def test_with_htmx(owner_client, saved_metric, django_capture_on_commit_callbacks):
    evaluation = started(owner_client, saved_metric, django_capture_on_commit_callbacks)
    detail = reverse("evaluations:detail", args=[evaluation.pk])
    live = owner_client.get(detail, {"partial": "live"}, HTTP_HX_REQUEST="true")
    assert live.status_code == 200 and "<html" not in live.content.decode()
    assert "HX-Refresh" not in live

    execute_evaluation(evaluation.pk)
    final = owner_client.get(detail, {"partial": "live"}, HTTP_HX_REQUEST="true")
    # Final: the panel's last answer is the results, swapped in where it was.
    assert final.status_code == 286 and "HX-Refresh" not in final
    assert "histogram-chart" in final.content.decode()
    assert "histogram-chart" in owner_client.get(detail).content.decode()
