"""The labelling pages: starting one, the case page (hidden until labelled, then
revealed), moving, progress, and the same with and without JavaScript."""

from __future__ import annotations

import pytest

from labelling.models import Label, Labelling
from tests.labelling.conftest import url

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_start_form_guesses_the_columns_and_makes_the_labelling(owner_client, dataset):
    page = owner_client.get(f"/en/labellings/new/dataset/{dataset.pk}/")
    assert page.status_code == 200
    assert page.context["form"].initial["input_columns"] == ["question"]
    assert page.context["form"].initial["output_column"] == "response"
    assert page.context["form"].initial["expected_column"] == "expected"
    response = owner_client.post(
        f"/en/labellings/new/dataset/{dataset.pk}/",
        {
            "kind": "scale",
            "scale": "3",
            "input_columns": ["question"],
            "output_column": "response",
            "expected_column": "",
        },
    )
    labelling = Labelling.objects.get()
    assert response.status_code == 302 and response["Location"] == url(labelling)
    assert (labelling.kind, labelling.scale, labelling.total) == ("scale", 3, 5)
    assert (labelling.input_columns, labelling.expected_column) == (["question"], "")


def test_a_labelling_must_show_something(owner_client, dataset):
    response = owner_client.post(
        f"/en/labellings/new/dataset/{dataset.pk}/",
        {"kind": "pass_fail", "scale": "5", "output_column": "", "expected_column": "expected"},
    )
    assert response.status_code == 400
    assert "Choose at least one input column or the recorded output" in response.content.decode()
    assert not Labelling.objects.exists()


def test_from_an_evaluation_the_columns_are_its_roles(owner_client, evaluation):
    page = owner_client.get(f"/en/labellings/new/evaluation/{evaluation.pk}/")
    assert page.context["form"].initial["input_columns"] == ["question"]
    assert page.context["form"].initial["output_column"] == "response"
    assert page.context["form"].initial["expected_column"] == "expected"
    owner_client.post(
        f"/en/labellings/new/evaluation/{evaluation.pk}/",
        {
            "kind": "pass_fail",
            "scale": "5",
            "input_columns": ["question"],
            "output_column": "response",
            "expected_column": "expected",
        },
    )
    labelling = Labelling.objects.get()
    assert labelling.evaluation == evaluation and labelling.total == 3


def test_an_evaluation_still_running_cannot_be_labelled_yet(owner_client, evaluation):
    evaluation.status = "running"
    evaluation.save()
    page = owner_client.post(
        f"/en/labellings/new/evaluation/{evaluation.pk}/",
        {"kind": "pass_fail", "scale": "5", "input_columns": ["question"]},
    )
    assert page.status_code == 400
    assert "This evaluation has not ended" in page.content.decode()
    assert not Labelling.objects.exists()


def test_the_metric_is_hidden_until_the_row_is_labelled_then_shown_beside_the_label(
    owner_client, scored
):
    page = owner_client.get(url(scored))
    body = page.content.decode()
    assert "Capital of France?" in body and "Lyon" in body and "Paris" in body
    assert "feedback of row 1" not in body and "0.25" not in body
    assert 'id="label-hidden"' in body
    answer = owner_client.post(url(scored, "cases/1/label/"), {"value": "0", "note": ""}, **HTMX)
    assert answer.status_code == 200
    part = answer.content.decode()
    # The answer is the next case, with the one just labelled and what it reveals.
    assert "<html" not in part and "Colour of the sky?" in part
    assert "Case 1 saved." in part and "feedback of row 1" in part and "0.25" in part
    assert "feedback of row 3" not in part
    assert answer["HX-Push-Url"] == url(scored, "cases/2/")
    label = Label.objects.get()
    assert (label.row, label.value) == (1, 0.0)
    # Back on the labelled case, the score shows beside the label.
    back = owner_client.get(url(scored, "cases/1/")).content.decode()
    assert "feedback of row 1" in back and 'aria-pressed="true"' in back


def test_the_page_opens_at_the_first_case_not_labelled_and_counts_progress(owner_client, labelling):
    for number in (1, 2):
        owner_client.post(url(labelling, f"cases/{number}/label/"), {"value": "1"})
    page = owner_client.get(url(labelling)).content.decode()
    assert "Case 3 of 5" in page and "=HYPERLINK" in page
    assert "2 of 5 labelled" in page
    assert '<progress max="5" value="2"' in page


def test_without_javascript_a_label_posts_and_the_next_case_shows_what_it_revealed(
    owner_client, scored
):
    response = owner_client.post(url(scored, "cases/2/label/"), {"value": "1", "note": "fine"})
    assert response.status_code == 302
    assert response["Location"] == url(scored, "cases/3/") + "?after=2"
    page = owner_client.get(response["Location"]).content.decode()
    assert "Case 3 of 3" in page and "Largest planet?" in page
    assert "Case 2 saved." in page and "feedback of row 3" in page and "fine" in page
    # The last case stays where it is once labelled, showing its own score.
    last = owner_client.post(url(scored, "cases/3/label/"), {"value": "0"})
    assert last["Location"] == url(scored, "cases/3/")
    assert "feedback of row 4" in owner_client.get(last["Location"]).content.decode()


def test_moving_between_cases_with_links_and_htmx(owner_client, labelling):
    page = owner_client.get(url(labelling, "cases/2/")).content.decode()
    assert f'href="{url(labelling, "cases/1/")}"' in page
    assert f'href="{url(labelling, "cases/3/")}"' in page
    part = owner_client.get(url(labelling, "cases/3/"), **HTMX).content.decode()
    assert "<html" not in part and 'id="labelling-case"' in part and "Case 3 of 5" in part
    first = owner_client.get(url(labelling, "cases/1/")).content.decode()
    assert 'id="label-previous"' not in first
    last = owner_client.get(url(labelling, "cases/5/")).content.decode()
    assert 'id="label-next"' not in last
    assert owner_client.get(url(labelling, "cases/6/")).status_code == 404


def test_a_note_saves_alone_once_the_case_is_labelled(owner_client, labelling):
    refused = owner_client.post(
        url(labelling, "cases/1/label/"), {"value": "", "note": "x"}, **HTMX
    )
    assert refused.status_code == 400
    assert "Choose a label first" in refused.content.decode()
    owner_client.post(url(labelling, "cases/1/label/"), {"value": "1"}, **HTMX)
    saved = owner_client.post(
        url(labelling, "cases/1/label/"), {"value": "", "note": "typo in the answer"}, **HTMX
    )
    assert saved.status_code == 200 and "Case 1 of 5" in saved.content.decode()
    assert "Saved." in saved.content.decode()
    assert Label.objects.get().note == "typo in the answer"


def test_a_value_that_is_no_label_is_a_clear_error(owner_client, labelling):
    response = owner_client.post(url(labelling, "cases/1/label/"), {"value": "7"})
    assert response.status_code == 400
    assert "A label here is one of: 1, 0." in response.content.decode()
    assert not Label.objects.exists()


def test_the_page_has_a_key_legend_and_works_in_spanish(owner_client, labelling):
    page = owner_client.get(url(labelling, language="es")).content.decode()
    assert 'id="key-legend"' in page and "<kbd>N</kbd>" in page and "<kbd>0</kbd>" in page
    assert 'lang="es"' in page


def test_the_list_shows_mine_and_those_shared_with_me(client, owner, invitee, shared):
    client.force_login(invitee)
    page = client.get("/en/labellings/").content.decode()
    shared_part = page.split('id="shared"')[1]
    assert "quiz.csv" in shared_part and "alice" in shared_part
    assert "None yet" in page.split('id="shared"')[0]
    client.force_login(owner)
    mine = client.get("/en/labellings/").content.decode()
    assert "quiz.csv" in mine.split('id="shared"')[0]
    assert "Nobody has shared a labelling with you." in mine


def test_the_datasets_page_and_an_evaluation_link_to_labelling(owner_client, dataset, evaluation):
    page = owner_client.get("/en/datasets/").content.decode()
    assert f'href="/en/labellings/new/dataset/{dataset.pk}/"' in page
    detail = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert f'href="/en/labellings/new/evaluation/{evaluation.pk}/"' in detail
