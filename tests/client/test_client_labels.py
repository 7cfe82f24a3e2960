"""`skynet labels` against the live server: the labellings alice owns and the one carol
shared with her, listed with how far she got; one of them with the address of the next
case to label (a page that opens); its labels saved as a dataset version, once; and what
an invitee, an outsider and a mistyped id are told."""

# The labelling tests' fixtures, imported by name: pytest finds them here.
# ruff: noqa: F401, F811

from __future__ import annotations

import pytest

from labelling import cases, services
from submissions import services as submit_services
from submissions.models import Dataset
from tests.api.conftest import make_token
from tests.labelling.conftest import CSV, dataset, invitee, labelling

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def label(labelling, person, row: int, value: int) -> None:
    services.label_save(labelling, person, cases.case_of_row(labelling, row), value=str(value))


@pytest.fixture
def carols(invitee, owner):
    """A labelling of carol's own dataset, shared with alice."""
    data = submit_services.dataset_create(owner=invitee, filename="poems.csv", data=CSV.encode())
    theirs = services.labelling_create(
        owner=invitee, dataset=data, input_columns=["question"], output_column="response"
    )
    services.invitation_create(theirs, owner)
    return theirs


def test_the_list_holds_mine_and_those_shared_with_me(cli, owner, labelling, carols):
    label(labelling, owner, 0, 1)
    label(labelling, owner, 1, 0)
    done = cli("labels")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["ID", "DATASET", "LABELLED", "SHARED", "BY"]
    assert lines[1].split() == [str(labelling.pk), "quiz.csv", "2/5"]
    assert lines[2].split() == [str(carols.pk), "poems.csv", "0/5", "carol"]
    assert lines[3] == f"Label them in the browser: {cli.url}/en/labellings/"

    code, listed = cli.json("labels")
    assert code == 0
    assert [(item["id"], item["mine"], item["owner"]) for item in listed] == [
        (labelling.pk, True, "alice"),
        (carols.pk, False, "carol"),
    ]
    assert listed[1]["page"] == f"{cli.url}/en/labellings/{carols.pk}/"


def test_someone_with_no_labelling_is_told_where_to_start_one(cli, outsider, labelling):
    done = cli("labels", SKYNET_TOKEN=make_token(outsider))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "You have no labellings, and none is shared with you. Start one from a dataset or "
        f"an evaluation: {cli.url}/en/labellings/\n"
    )


def test_one_labelling_says_where_to_go_on_labelling_in_the_readers_language(
    cli, owner, owner_client, labelling
):
    label(labelling, owner, 0, 1)
    done = cli("labels", str(labelling.pk))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        f"Labelling {labelling.pk}: quiz.csv, pass or fail",
        "  1 of 5 cases labelled by you",
        "  Label the next case in the browser:",
    ]
    spanish = cli("labels", str(labelling.pk), "--language", "es")
    address = spanish.stdout.splitlines()[-1].strip()
    assert address == f"{cli.url}/es/labellings/{labelling.pk}/cases/2/"
    assert "Label" not in spanish.stdout and "etiquetado" in spanish.stdout
    # The address is the page's: it opens on the case that is next.
    page = owner_client.get(address.removeprefix(cli.url))
    assert page.status_code == 200
    assert "Capital of France?" in page.content.decode()


def test_export_saves_the_labels_as_a_dataset_version_once(cli, owner, labelling, dataset):
    label(labelling, owner, 2, 1)
    code, saved = cli.json("labels", str(labelling.pk), "--export")
    assert code == 0, saved
    version = Dataset.objects.get(pk=saved["version"]["dataset"]["id"])
    assert version.parent_id == dataset.pk and version.rows[2]["human_label"] == "pass"
    assert saved["version"]["reused"] is False

    again = cli("labels", str(labelling.pk), "--export")
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"These labels were saved before, as dataset {version.pk}, {version.filename}.\n"
    )
    label(labelling, owner, 3, 0)
    newer = cli("labels", str(labelling.pk), "--export")
    made = Dataset.objects.order_by("-pk").first()
    assert newer.stdout == f"Saved the labels as dataset {made.pk}, {made.filename} (5 rows).\n"
    assert made.rows[3]["human_label"] == "fail"
    assert Dataset.objects.count() == 3


def test_an_invitee_cannot_export_and_an_outsider_finds_nothing(cli, outsider, invitee, labelling):
    services.invitation_create(labelling, invitee)
    carol = cli("labels", str(labelling.pk), "--export", SKYNET_TOKEN=make_token(invitee))
    assert carol.returncode == 2
    assert (
        f"Only alice, who owns labelling {labelling.pk}, can save its labels as a dataset "
        "version." in carol.stderr
    )
    shown = cli("labels", str(labelling.pk), SKYNET_TOKEN=make_token(invitee))
    assert shown.returncode == 0 and "  shared with you by alice\n" in shown.stdout
    bob = make_token(outsider)
    for argv in ([str(labelling.pk)], [str(labelling.pk), "--export"]):
        code, refused = cli.json("labels", *argv, SKYNET_TOKEN=bob)
        assert code == 2 and refused["error"]["code"] == "not_found", refused
    assert Dataset.objects.count() == 1
