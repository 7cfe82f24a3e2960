"""The example labelled dataset the "Is my metric right?" page links: served under every
docs language, and a file that, uploaded as it is, has its human columns guessed as such
and reads as pass/fail labels with notes."""

from __future__ import annotations

import csv
import io
import re

import pytest

from alignment import plans
from dataset_files.splits import split_sizes
from docs_site import pages
from evaluations import start
from metrics import services as metric_services
from submissions import services as submit_services
from submissions.models import Dataset

pytestmark = pytest.mark.django_db

NAME = "judge-labels.csv"
FILE = pages.DOCS_DIR / "examples" / NAME


def _upload(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


@pytest.mark.parametrize("language", pages.LANGUAGES)
def test_the_file_is_downloaded_as_it_is_kept_in_every_language(client, language):
    response = client.get(f"/docs/{language}/examples/{NAME}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{NAME}"'
    assert response.content == FILE.read_bytes()


def test_only_the_listed_files_are_served(client):
    assert client.get("/docs/en/examples/nothing.csv").status_code == 404
    # Nothing outside docs/examples/, whatever the name.
    assert client.get("/docs/en/examples/..%2Fen%2Fconcepts%2Fscorers.md").status_code == 404
    assert client.get("/docs/fr/examples/judge-labels.csv").status_code == 404


def test_the_file_holds_24_questions_answered_and_labelled_pass_or_fail():
    rows = list(csv.DictReader(FILE.read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 24
    # Enough for "Improve the judge against the human labels", which the page walks through.
    assert len(rows) >= plans.MIN_LABELLED
    # The page says 5 of them are held out from the run, to compare the two judges on.
    assert split_sizes(len(rows), plans.RATIOS)[2] == 5
    assert {row["human_label"] for row in rows} == {"pass", "fail"}
    # Every failed answer says why, so the results can show the person's reason.
    assert all(row["human_note"] for row in rows if row["human_label"] == "fail")


def test_uploaded_on_the_evaluate_page_its_columns_get_their_roles(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="judge", starter="judge_with_labels")
    response = owner_client.post(
        f"/en/metrics/{metric.pk}/evaluate/upload/", {"file": _upload(FILE.read_bytes(), NAME)}
    )
    dataset = Dataset.objects.get(owner=owner)
    assert response.status_code == 302 and response["Location"].endswith(f"?dataset={dataset.pk}")
    guessed = start.guessed_settings(dataset)
    assert guessed["roles"] == {
        "question": "input",
        "response": "ignore",
        "human_label": "human_label",
        "human_note": "human_note",
    }
    assert guessed["recorded_column"] == "response"
    # The page starts with those roles chosen, in the words the select shows.
    page = owner_client.get(response["Location"]).content.decode()
    selects = re.findall(
        r'<select name="role_[^>]*data-column="([^"]+)"[^>]*>(.*?)</select>', page, re.S
    )
    chosen = {column: re.search(r" selected>([^<]+)<", options)[1] for column, options in selects}
    assert chosen["human_label"] == "Human label"
    assert chosen["human_note"] == "Human note"
    assert chosen["question"] == "Input"
    # Read as the evaluation will read them: pass/fail, the failing one first.
    human = start.human_settings(dataset, guessed["roles"], {})
    assert human["label_column"] == "human_label" and human["classes"] == ["fail", "pass"]
    assert human["note_column"] == "human_note"


def test_uploaded_in_the_wizard_its_human_columns_get_their_roles(owner):
    draft = submit_services.draft_create(owner=owner)
    submit_services.dataset_upload(draft, filename=NAME, data=FILE.read_bytes())
    draft.refresh_from_db()
    assert draft.roles["human_label"] == "human_label"
    assert draft.roles["human_note"] == "human_note"
    assert draft.roles["question"] == "input"
