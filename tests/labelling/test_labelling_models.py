"""The labelling's services and reads, without pages: its cases copied into chunks, a
label saved, the first case a person has not labelled."""

from __future__ import annotations

import pytest

from labelling import cases, selectors, services
from labelling.models import CHUNK, CaseChunk, Label
from submissions import services as submit_services

pytestmark = pytest.mark.django_db


def test_a_labelling_holds_every_row_with_the_columns_it_shows(labelling):
    assert labelling.total == 5
    case = cases.case_at(labelling, 1)
    assert case.row == 1 and case.number == 2
    assert case.input == {"question": "Capital of France?"}
    assert (case.output, case.expected, case.case) == ("Lyon", "Paris", None)
    assert cases.case_at(labelling, 5) is None and cases.case_at(labelling, -1) is None


def test_a_labelling_of_an_evaluation_holds_the_rows_it_scored_in_file_order(scored):
    assert scored.total == 3
    found = [cases.case_at(scored, position) for position in range(3)]
    assert [(case.row, case.case) for case in found] == [(1, 0), (3, 1), (4, 2)]
    assert cases.case_of_row(scored, 3).position == 1
    assert cases.case_of_row(scored, 0) is None


def test_a_case_is_one_read_of_one_chunk_whatever_the_dataset_size(
    owner, django_assert_num_queries
):
    rows = "".join(f"q{i},a{i}\n" for i in range(CHUNK * 2 + 50))
    dataset = submit_services.dataset_create(
        owner=owner, filename="big.csv", data=f"question,answer\n{rows}".encode()
    )
    labelling = services.labelling_create(
        owner=owner, dataset=dataset, input_columns=["question"], output_column="answer"
    )
    assert labelling.total == CHUNK * 2 + 50
    assert CaseChunk.objects.filter(labelling=labelling).count() == 3
    with django_assert_num_queries(1):
        case = cases.case_at(labelling, CHUNK * 2 + 7)
    assert (case.row, case.input, case.output) == (CHUNK * 2 + 7, {"question": "q207"}, "a207")
    with django_assert_num_queries(1):
        assert cases.case_of_row(labelling, CHUNK + 3).position == CHUNK + 3


def test_a_label_is_one_of_the_kinds_values_and_one_per_person_and_row(labelling, owner):
    case = cases.case_at(labelling, 0)
    with pytest.raises(services.LabelRefused) as refused:
        services.label_save(labelling, owner, case, value="2")
    assert refused.value.code == "bad_value"
    services.label_save(labelling, owner, case, value="0", note="wrong sum")
    services.label_save(labelling, owner, case, value="1")
    label = Label.objects.get()
    assert (label.value, label.note, label.row, label.position) == (1.0, "wrong sum", 0, 0)


def test_a_scale_takes_1_to_n(owner, dataset):
    labelling = services.labelling_create(
        owner=owner, dataset=dataset, kind="scale", scale=4, input_columns=["question"]
    )
    assert labelling.values == [1, 2, 3, 4]
    case = cases.case_at(labelling, 0)
    for refused in ("0", "5", "x", "2.5"):
        with pytest.raises(services.LabelRefused):
            services.label_save(labelling, owner, case, value=refused)
    assert services.label_save(labelling, owner, case, value="4").value == 4.0


def test_a_note_alone_needs_a_label_given_before(labelling, owner):
    case = cases.case_at(labelling, 2)
    with pytest.raises(services.LabelRefused) as refused:
        services.label_save(labelling, owner, case, note="hmm")
    assert refused.value.code == "no_label"
    services.label_save(labelling, owner, case, value="1")
    services.label_save(labelling, owner, case, note="a formula in the question")
    assert Label.objects.get().note == "a formula in the question"


def test_the_first_case_not_labelled_skips_what_the_person_labelled(labelling, owner, invitee):
    assert selectors.first_unlabelled(labelling, owner) == 0
    for position in (0, 1, 3):
        services.label_save(labelling, owner, cases.case_at(labelling, position), value="1")
    assert selectors.first_unlabelled(labelling, owner) == 2
    assert selectors.first_unlabelled(labelling, invitee) == 0
    for position in (2, 4):
        services.label_save(labelling, owner, cases.case_at(labelling, position), value="0")
    # Every case labelled: the page opens at the first.
    assert selectors.first_unlabelled(labelling, owner) == 0
    assert selectors.labelled_count(labelling, owner) == 5


def test_human_columns_are_never_guessed_as_input():
    from labelling.forms import default_columns

    found = default_columns(["question", "response", "expected", "human_label", "id"])
    assert found == {
        "input_columns": ["question"],
        "output_column": "response",
        "expected_column": "expected",
    }
