"""/api/v1/datasets: an upload read as the pages read it (the same guesses, preview,
warnings and refusals, in the reader's language), listed and read back by its owner only."""

from __future__ import annotations

import io

import pytest
from django.utils import translation

import dataset_files
from api import tokens
from evaluations import start
from submissions.models import Dataset
from tests.api.conftest import Api, make_token
from wording import words

pytestmark = pytest.mark.django_db

CSV = (
    "ticket_id,question,label,output\n"
    "T-1,I was charged twice.,billing,billing\n"
    "T-2,The app crashes.,bug,=HYPERLINK(1)\n"
    "T-3,Change my email?,account,account\n"
)


def upload(api: Api, data: bytes, filename: str = "tickets.csv", **fields):
    handle = io.BytesIO(data)
    handle.name = filename
    return api.upload("/datasets", {"file": handle, **fields})


def test_an_upload_reads_as_the_playground_reads_it(api, owner):
    response = upload(api, CSV.encode())
    assert response.status_code == 201, response.content
    body = response.json()
    assert body.pop("reused") is False  # the upload's answer only
    dataset = Dataset.objects.get(owner=owner)
    assert body["id"] == dataset.pk and body["name"] == "tickets.csv"
    assert body["size"] == len(CSV.encode()) and body["rows"] == 3
    assert (body["format"], body["encoding"]) == ("csv", "utf-8")
    guessed = start.guessed_settings(dataset)
    assert body["columns"] == [
        {"name": "ticket_id", "role": "ignore", "type": "text"},
        {"name": "question", "role": "input", "type": "text"},
        {"name": "label", "role": "output", "type": "text"},
        # The recorded outputs' column, guessed by its name, reaches score() as the output.
        {"name": "output", "role": "ignore", "type": "text"},
    ]
    assert [c["role"] for c in body["columns"]] == [guessed["roles"][c] for c in dataset.columns]
    assert body["recorded_column"] == "output" and body["split_column"] == ""
    assert body["preview"] == start.preview_rows(dataset)
    # The formula-like cell is shown made harmless, and warned about in words.
    assert body["preview"][1][3] == {"text": "'=HYPERLINK(1)", "kind": "text"}
    assert [w["code"] for w in body["warnings"]] == ["formula_like_cells"]
    assert "row 3, column output" in body["warnings"][0]["message"]
    # Read back: the same document.
    assert api.get(f"/datasets/{dataset.pk}").json() == body


def test_a_name_and_a_guessed_encoding_in_spanish(owner):
    spanish = Api(make_token(owner), "es")
    data = "city,answer\nMálaga,sí\nCórdoba,no\n".encode("cp1252")
    body = upload(spanish, data, "cities.csv", name="  Mis   ciudades ").json()
    assert body["name"] == "Mis ciudades" and body["encoding"] == "cp1252"
    assert body["preview"][0][0]["text"] == "Málaga"
    warning = body["warnings"][0]
    assert warning["code"] == "encoding_guessed"
    with translation.override("es"):
        assert warning["message"] == words(
            "encoding_guessed", {"encoding": "cp1252"}, family="dataset_warning"
        )
    with translation.override("en"):
        english = words("encoding_guessed", {"encoding": "cp1252"}, family="dataset_warning")
    assert warning["message"] != english


def test_the_list_is_the_owners_newest_first(api, owner, outsider, outsider_api):
    first = upload(api, CSV.encode(), "first.csv").json()
    # Another file: the same one again would be the first dataset (tests/api/
    # test_api_dataset_storage.py).
    second = upload(api, (CSV + "T-4,Hello?,account,account\n").encode(), "second.csv").json()
    theirs = upload(outsider_api, CSV.encode(), "theirs.csv").json()
    listed = api.get("/datasets").json()
    assert [d["id"] for d in listed] == [second["id"], first["id"]]
    assert listed[0] == {key: second[key] for key in listed[0]}
    # Another user's dataset does not exist for this one.
    missing = api.get(f"/datasets/{theirs['id']}")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert api.get("/datasets/999999").json() == missing.json()


@pytest.mark.parametrize(
    ("data", "filename", "code", "params"),
    [
        (b"PK\x03\x04 a workbook", "book.csv", "not_text", {"kind": "zip"}),
        (b"\xef\xbb\xbfa,b\n\xff\xfe,1\n", "bad.csv", "undecodable", {"encoding": "utf-8-sig"}),
        (b'{"a": 1}\n[1, 2]\n', "rows.jsonl", "not_object", {"type": "array", "row": 2}),
        (b"question,label\n", "header.csv", "no_rows", {}),
    ],
)
def test_a_file_that_cannot_be_used_is_refused_in_the_pages_words(
    owner, data, filename, code, params
):
    for language in ("en", "es", "hi"):
        response = upload(Api(make_token(owner), language), data, filename)
        assert response.status_code == 422
        body = response.json()
        assert (body["code"], body["field"]) == (code, "file")
        full = {"row": None, "column": None, **params}
        with translation.override(language):
            assert body["message"] == words(code, full, family="dataset")
        with translation.override("en"):
            assert (body["message"] == words(code, full, family="dataset")) == (language == "en")
    assert not Dataset.objects.exists()


def test_an_empty_or_missing_file_is_the_upload_forms_error(api, owner):
    empty = upload(Api(make_token(owner), "es"), b"")
    assert empty.status_code == 422
    assert empty.json()["code"] == "empty" and empty.json()["field"] == "file"
    with translation.override("es"):
        from submissions.forms import UploadForm

        expected = str(UploadForm.base_fields["file"].error_messages["empty"])
        assert empty.json()["message"] == f"file: {expected}"
    missing = api.upload("/datasets", {"name": "nothing"})
    assert missing.status_code == 422
    assert missing.json()["code"] == "required" and missing.json()["field"] == "file"
    assert not Dataset.objects.exists()


def test_a_file_over_the_limit_is_stopped_while_it_arrives(api, owner, monkeypatch):
    monkeypatch.setattr(dataset_files, "MAX_BYTES", 100)
    response = upload(api, CSV.encode() * 3)
    assert response.status_code == 413
    body = response.json()
    assert (body["code"], body["field"]) == ("too_large", "file")
    assert "the limit is 100\xa0bytes" in body["message"]
    assert not Dataset.objects.exists()


def test_tokens_are_checked(owner, read_api, expired_token):
    assert upload(Api(None), CSV.encode()).json()["code"] == "unauthenticated"
    assert Api(None).get("/datasets").status_code == 401
    row, token = tokens.token_create(owner=owner, name="gone", scope="write", days=30)
    tokens.token_revoke(row)
    revoked = Api(token).get("/datasets")
    assert revoked.status_code == 401 and revoked.json()["code"] == "token_revoked"
    expired = Api(expired_token).get("/datasets")
    assert expired.status_code == 401 and expired.json()["code"] == "token_expired"
    refused = upload(read_api, CSV.encode())
    assert refused.status_code == 403 and refused.json()["code"] == "read_only_token"
    assert read_api.get("/datasets").status_code == 200
    assert not Dataset.objects.exists()


def test_a_file_uploaded_before_is_found_by_its_hash_and_name(api, outsider_api):
    import hashlib

    data = b"question,label\nq1,billing\nq2,bug\n"
    first = upload(api, data).json()
    digest = hashlib.sha256(data).hexdigest()
    assert first["sha256"] == digest
    found = api.get("/datasets", data={"sha256": digest, "name": "tickets.csv"}).json()
    assert [d["id"] for d in found] == [first["id"]]
    assert api.get("/datasets", data={"sha256": digest, "name": "other.csv"}).json() == []
    assert api.get("/datasets", data={"sha256": "0" * 64}).json() == []
    assert outsider_api.get("/datasets", data={"sha256": digest}).json() == []
