"""/api/v1/datasets and a user's storage: the same file uploaded again is that dataset (200,
reused), an upload past the quota is refused (413 storage_quota) in the reader's language
with nothing stored, DELETE deletes a dataset nothing keeps (409 dataset_in_use while an
evaluation or a run does), and /me says what is used of the quota."""

from __future__ import annotations

import io

import pytest
from django.utils import translation

from evaluations.models import Evaluation
from submissions import storage
from submissions.models import Dataset
from tests.api.conftest import Api, make_token
from wording import words

pytestmark = pytest.mark.django_db

CSV = b"question,label\nI was charged twice.,billing\nThe app crashes.,bug\n"


def upload(api: Api, data: bytes, filename: str = "tickets.csv", **fields):
    handle = io.BytesIO(data)
    handle.name = filename
    return api.upload("/datasets", {"file": handle, **fields})


def test_the_same_file_again_is_the_dataset_stored_before(api, owner):
    first = upload(api, CSV)
    assert first.status_code == 201 and first.json()["reused"] is False
    again = upload(api, CSV, "other-name.csv", name="Another name")
    assert again.status_code == 200
    body = again.json()
    assert body["reused"] is True and body["id"] == first.json()["id"]
    assert body["name"] == "tickets.csv"  # the first name is kept
    assert Dataset.objects.filter(owner=owner).count() == 1


def test_the_schema_names_both_answers_of_an_upload(api):
    schema = api.client.get("/api/v1/schema").json()
    answers = schema["paths"]["/api/v1/datasets"]["post"]["responses"]
    assert {"200", "201"} <= set(answers)
    assert "delete" in schema["paths"]["/api/v1/datasets/{dataset_id}"]


def test_an_upload_past_the_quota_is_refused_in_the_readers_language(owner, settings):
    settings.DATASET_QUOTA_MB = 1
    kept = Api(make_token(owner))
    upload(kept, b"a,b\n1,2\n")
    Dataset.objects.update(stored_bytes=storage.MEGABYTE - 10)
    for language in ("en", "es"):
        response = upload(Api(make_token(owner), language), CSV)
        assert response.status_code == 413
        body = response.json()
        assert (body["code"], body["field"]) == ("storage_quota", "file")
        params = {"size": len(CSV), "used": storage.MEGABYTE - 10, "limit": storage.MEGABYTE}
        with translation.override(language):
            assert body["message"] == words("storage_quota", params, family="api")
    assert "1 MB of your 1 MB" in upload(kept, CSV).json()["message"]
    assert Dataset.objects.count() == 1


def test_me_says_what_is_used_of_the_quota(api, owner, settings):
    settings.DATASET_QUOTA_MB = 3
    upload(api, CSV)
    me = api.get("/me").json()
    assert me["dataset_bytes_used"] == Dataset.objects.get().stored_bytes > len(CSV)
    assert me["dataset_bytes_quota"] == 3 * storage.MEGABYTE


def test_delete_deletes_unless_an_evaluation_keeps_it(api, owner, outsider, read_api):
    kept = upload(api, CSV).json()["id"]
    free = upload(api, CSV + b"x,y\n").json()["id"]
    Evaluation.objects.create(owner=owner, dataset_id=kept, source="x", total=1)
    refused = api.delete(f"/datasets/{kept}")
    assert refused.status_code == 409
    assert refused.json()["code"] == "dataset_in_use"
    assert "1 evaluation" in refused.json()["message"]
    spanish = Api(make_token(owner), "es").delete(f"/datasets/{kept}").json()
    with translation.override("es"):
        assert spanish["message"] == words(
            "dataset_in_use", {"evaluations": 1, "runs": 0}, family="api"
        )
    assert read_api.delete(f"/datasets/{free}").status_code == 403
    theirs = Api(make_token(outsider)).delete(f"/datasets/{free}")
    assert theirs.status_code == 404 and theirs.json()["code"] == "not_found"
    deleted = api.delete(f"/datasets/{free}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert list(Dataset.objects.values_list("pk", flat=True)) == [kept]
    assert api.get(f"/datasets/{free}").status_code == 404
