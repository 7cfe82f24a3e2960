"""A labelling saved as a new dataset version: its rows, columns and file, stored as an
upload is, within the quota, the original left byte for byte."""

from __future__ import annotations

import csv
import io
import json

import pytest

import dataset_files
from labelling import cases, services, versions
from submissions import services as submit_services
from submissions import storage
from submissions.models import Dataset
from tests.labelling.conftest import url

pytestmark = pytest.mark.django_db

FIELDS = [field.name for field in Dataset._meta.concrete_fields]


def _label(labelling, person, values, notes=None):
    for position, value in enumerate(values):
        if value is not None:
            note = (notes or {}).get(position, "")
            case = cases.case_at(labelling, position)
            services.label_save(labelling, person, case, value=str(value), note=note)


def _snapshot(dataset) -> dict:
    row = Dataset.objects.get(pk=dataset.pk)
    return {name: getattr(row, name) for name in FIELDS}


def test_a_version_adds_each_labellers_columns_and_leaves_the_original_as_it_was(
    owner_client, owner, invitee, shared, dataset
):
    before = _snapshot(dataset)
    _label(shared, owner, [1, 0, None, 1, 0], notes={1: "Lyon is wrong"})
    _label(shared, invitee, [1, 1])
    response = owner_client.post(url(shared, "version/"), follow=True)
    version = Dataset.objects.exclude(pk=dataset.pk).get()
    assert "Saved as a new dataset, quiz-v2.csv." in response.content.decode()
    assert "from quiz.csv, with labels" in response.content.decode()
    assert version.parent_id == dataset.pk and version.filename == "quiz-v2.csv"
    assert version.columns == [
        "question", "response", "expected", "id",
        "human_label", "human_note", "human_label_carol", "human_note_carol",
    ]  # fmt: skip
    assert version.row_count == 5
    assert [row["human_label"] for row in version.rows] == ["pass", "fail", "", "pass", "fail"]
    assert version.rows[1]["human_note"] == "Lyon is wrong"
    assert [row["human_label_carol"] for row in version.rows] == ["pass", "pass", "", "", ""]
    assert version.rows[0]["question"] == "What is 2+2?"
    # The file again, written by the csv module, a formula-like cell made safe.
    read = list(csv.reader(io.StringIO(bytes(version.raw).decode())))
    assert read[0] == version.columns
    assert read[3][0] == '\'=HYPERLINK("x")'
    assert read[2][4:6] == ["fail", "Lyon is wrong"]
    # As an upload computes them.
    table = dataset_files.parse_dataset(bytes(version.raw), filename=version.filename)
    assert version.rows == table.rows and version.row_numbers == table.row_numbers
    assert version.inferred_types == dataset_files.infer_types(table)
    assert version.preview == table.rows[:10]
    assert version.stored_bytes == storage.cost(
        raw=bytes(version.raw), rows=table.rows, preview=version.preview,
        row_numbers=table.row_numbers,
    )  # fmt: skip
    import hashlib

    assert version.sha256 == hashlib.sha256(bytes(version.raw)).hexdigest()
    after = _snapshot(dataset)
    assert bytes(after.pop("raw")) == bytes(before.pop("raw"))
    assert after == before


def test_a_jsonl_scale_keeps_numbers_and_one_object_a_line(owner, dataset):
    lines = [{"question": f"q{i}", "output": f"a{i}", "meta": {"k": i}} for i in range(3)]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    source = submit_services.dataset_create(owner=owner, filename="qa.jsonl", data=data)
    labelling = services.labelling_create(
        owner=owner, dataset=source, kind="scale", scale=5, input_columns=["question"]
    )
    _label(labelling, owner, [5, None, 2])
    version, before = versions.version_create(labelling)
    assert not before and version.format == "jsonl" and version.filename == "qa-v2.jsonl"
    written = [json.loads(line) for line in bytes(version.raw).decode().splitlines()]
    assert [row["human_score"] for row in written] == [5, None, 2]
    assert written[0]["meta"] == {"k": 0} and written[0]["human_note"] == ""
    assert [row["human_score"] for row in version.rows] == [5, None, 2]
    assert version.inferred_types["human_score"] == "number"
    assert bytes(Dataset.objects.get(pk=source.pk).raw) == data


def test_a_version_of_a_version_keeps_the_labels_it_had(owner, labelling):
    _label(labelling, owner, [1])
    first, _ = versions.version_create(labelling)
    again = services.labelling_create(owner=owner, dataset=first, input_columns=["question"])
    _label(again, owner, [0])
    second, _ = versions.version_create(again)
    assert second.columns[-4:] == ["human_label", "human_note", "human_label_2", "human_note_2"]
    assert (second.rows[0]["human_label"], second.rows[0]["human_label_2"]) == ("pass", "fail")


def test_the_same_labels_saved_twice_are_stored_once(owner_client, owner, labelling):
    _label(labelling, owner, [1])
    owner_client.post(url(labelling, "version/"))
    response = owner_client.post(url(labelling, "version/"), follow=True)
    assert "These labels were saved before, as quiz-v2.csv." in response.content.decode()
    assert Dataset.objects.count() == 2


def test_past_the_storage_quota_a_version_is_a_clear_message(
    owner_client, owner, labelling, dataset, settings
):
    settings.DATASET_QUOTA_MB = 0.001  # about 1 KB: less than the two files take
    _label(labelling, owner, [1])
    response = owner_client.post(url(labelling, "version/"), follow=True)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == url(labelling)
    assert "of storage, and your datasets already use" in response.content.decode()
    assert Dataset.objects.count() == 1
