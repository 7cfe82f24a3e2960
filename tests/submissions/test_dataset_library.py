"""A user's datasets: the same file is stored once (whichever page uploads it), the storage
quota refuses an upload past it with nothing stored, and the datasets page lists them
with the storage used and deletes one no evaluation or run keeps, after asking."""

from __future__ import annotations

import io

import pytest
from django.utils import translation

from evaluations.models import Evaluation
from metrics import services as metric_services
from submissions import services, storage
from submissions.models import Dataset, Draft
from wording import words

pytestmark = pytest.mark.django_db

CSV = b"question,label\nI was charged twice.,billing\nThe app crashes.,bug\n"


def _file(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def _wizard_upload(client, draft, data: bytes, name: str):
    return client.post(f"/en/submit/{draft.pk}/upload/", {"file": _file(data, name)})


def _evaluate_upload(client, metric, data: bytes, name: str):
    return client.post(f"/en/metrics/{metric.pk}/evaluate/upload/", {"file": _file(data, name)})


def test_the_wizard_stores_a_file_once_under_its_first_name(owner_client, owner):
    first = services.draft_create(owner=owner)
    second = services.draft_create(owner=owner)
    assert _wizard_upload(owner_client, first, CSV, "tickets.csv").status_code == 302
    assert _wizard_upload(owner_client, second, CSV, "renamed.csv").status_code == 302
    dataset = Dataset.objects.get(owner=owner)
    assert dataset.filename == "tickets.csv"
    assert dataset.stored_bytes == storage.cost(
        raw=CSV, rows=dataset.rows, preview=dataset.preview, row_numbers=dataset.row_numbers
    )
    for draft in (first, second):
        draft.refresh_from_db()
        assert draft.dataset_id == dataset.pk and draft.roles["question"] == "input"


def test_the_evaluate_page_stores_a_file_once_and_another_users_copy_is_theirs(
    owner_client, owner, outsider, client
):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    one = _evaluate_upload(owner_client, metric, CSV, "a.csv")
    two = _evaluate_upload(owner_client, metric, CSV, "b.csv")
    dataset = Dataset.objects.get(owner=owner)
    assert one["Location"] == two["Location"]
    assert one["Location"].endswith(f"?dataset={dataset.pk}")
    # The same bytes of another user's are theirs: stored for them.
    services.dataset_create(owner=outsider, filename="mine.csv", data=CSV)
    assert Dataset.objects.count() == 2


def test_an_upload_past_the_quota_is_refused_in_words_and_nothing_is_stored(
    owner_client, owner, settings
):
    settings.DATASET_QUOTA_MB = 1
    kept = services.dataset_create(owner=owner, filename="old.csv", data=b"a,b\n1,2\n")
    Dataset.objects.filter(pk=kept.pk).update(stored_bytes=storage.MEGABYTE - 50)
    draft = services.draft_create(owner=owner)
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    for response in (
        _wizard_upload(owner_client, draft, CSV, "tickets.csv"),
        _evaluate_upload(owner_client, metric, CSV, "tickets.csv"),
    ):
        assert response.status_code == 400
        page = response.content.decode()
        assert "your datasets already use 1 MB of your 1 MB" in page
        assert "Delete datasets you no longer need on the Datasets page" in page
    assert list(Dataset.objects.values_list("pk", flat=True)) == [kept.pk]
    draft.refresh_from_db()
    assert draft.dataset is None
    # A file stored before costs nothing more, so it is still taken.
    assert services.dataset_store(owner=owner, filename="x.csv", data=b"a,b\n1,2\n") == (
        kept,
        True,
    )


def test_the_quota_words_name_the_sizes_in_megabytes_in_each_language():
    params = {
        "size": 3 * storage.MEGABYTE // 2,
        "used": 499 * storage.MEGABYTE,
        "limit": 500 * storage.MEGABYTE,
    }
    with translation.override("en"):
        text = words("storage_quota", params, family="dataset")
    assert "at least 1.5 MB" in text and "499 MB of your 500 MB" in text


def test_the_page_lists_the_users_datasets_newest_first_with_the_storage_used(
    owner_client, owner, outsider, settings
):
    settings.DATASET_QUOTA_MB = 2
    older = services.dataset_create(owner=owner, filename="older.csv", data=CSV)
    newer = services.dataset_create(owner=owner, filename="newer.csv", data=CSV + b"x,y\n")
    services.dataset_create(owner=outsider, filename="theirs.csv", data=b"q,a\n1,2\n")
    Dataset.objects.filter(pk=older.pk).update(stored_bytes=storage.MEGABYTE // 2)
    Dataset.objects.filter(pk=newer.pk).update(stored_bytes=storage.MEGABYTE // 4)
    draft = services.draft_create(owner=owner)
    services.dataset_upload(draft, filename="older.csv", data=CSV)
    Evaluation.objects.create(owner=owner, dataset=older, source="x", total=1)
    page = owner_client.get("/en/datasets/").content.decode()
    assert page.index("newer.csv") < page.index("older.csv") and "theirs.csv" not in page
    assert "0.8 MB of 2 MB" in page
    assert f'max="{2 * storage.MEGABYTE}"' in page
    assert f'value="{3 * storage.MEGABYTE // 4}"' in page
    row = page.split(f'id="dataset-{older.pk}"')[1].split("</tr>")[0]
    assert "1 evaluation" in row and "1 draft" in row and 'data-label="Rows"' in row
    assert f'<time datetime="{older.created_at.year}-' in row
    assert f"/en/datasets/{older.pk}/delete/" in row
    # The site's navigation links it.
    assert 'href="/en/datasets/"' in owner_client.get("/en/runs/").content.decode()


def test_delete_asks_first_then_deletes_and_drafts_lose_it(owner_client, owner):
    draft = services.draft_create(owner=owner)
    dataset = services.dataset_upload(draft, filename="tickets.csv", data=CSV)
    asked = owner_client.get(f"/en/datasets/{dataset.pk}/delete/")
    assert asked.status_code == 200
    page = asked.content.decode()
    assert "tickets.csv" in page and 'id="delete-dataset"' in page
    assert f"/en/submit/{draft.pk}/" in page  # the draft that loses it is named
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    deleted = owner_client.post(f"/en/datasets/{dataset.pk}/delete/")
    assert deleted.status_code == 302 and deleted["Location"] == "/en/datasets/"
    assert not Dataset.objects.exists()
    draft.refresh_from_db()
    assert draft.dataset is None
    assert "Dataset deleted." in owner_client.get("/en/datasets/").content.decode()


def test_a_dataset_an_evaluation_or_a_run_keeps_is_not_deleted(owner_client, owner):
    dataset = services.dataset_create(owner=owner, filename="tickets.csv", data=CSV)
    evaluation = Evaluation.objects.create(owner=owner, dataset=dataset, source="x", total=1)
    asked = owner_client.get(f"/en/datasets/{dataset.pk}/delete/").content.decode()
    assert "cannot be deleted while 1 evaluation use it" in asked
    assert 'id="delete-dataset"' not in asked
    assert f"/en/evaluations/{evaluation.pk}/" in asked
    refused = owner_client.post(f"/en/datasets/{dataset.pk}/delete/")
    assert refused.status_code == 409
    assert "cannot be deleted while 1 evaluation use it" in refused.content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    with pytest.raises(services.DatasetInUse) as caught:
        services.dataset_delete(dataset)
    assert caught.value.uses == {"evaluations": 1, "runs": 0}


def test_another_users_dataset_does_not_exist_for_them(client, owner, outsider):
    dataset = services.dataset_create(owner=owner, filename="tickets.csv", data=CSV)
    client.force_login(outsider)
    assert client.get(f"/en/datasets/{dataset.pk}/delete/").status_code == 404
    assert client.post(f"/en/datasets/{dataset.pk}/delete/").status_code == 404
    assert client.post("/en/datasets/987654/delete/").status_code == 404
    assert "tickets.csv" not in client.get("/en/datasets/").content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    assert Draft.objects.count() == 0
