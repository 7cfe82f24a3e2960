"""The human columns: which roles may go together, how a label's classes and a score's
scale are read, and each row's values under them."""

from __future__ import annotations

import pytest

from dataset_files import DatasetError, Table, build_cases, human_of_row, human_settings
from dataset_files.human import human_columns, human_role_of, label_classes, parse_classes


def table(columns, rows, fmt="csv") -> Table:
    return Table(columns=columns, rows=rows, format=fmt, encoding="utf-8")


def refused(function, *args, **kwargs) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        function(*args, **kwargs)
    return caught.value


def test_a_role_takes_one_column_and_a_note_needs_a_score_or_a_label():
    assert human_columns({"q": "input", "h": "human_label", "n": "human_note"}) == {
        "human_label": "h",
        "human_note": "n",
    }
    two = refused(human_columns, {"a": "human_label", "b": "human_label"})
    assert (two.code, two.column, two.params["other"]) == ("two_human_columns", "b", "a")
    assert refused(human_columns, {"a": "human_score", "b": "human_label"}).code == (
        "score_and_label"
    )
    assert refused(human_columns, {"q": "input", "n": "human_note"}).code == "note_alone"


@pytest.mark.parametrize(
    ("values", "classes"),
    [
        (["pass", "fail", "pass"], ["fail", "pass"]),
        (["Yes", "no"], ["no", "Yes"]),
        ([1, 0, 1], ["0", "1"]),
        (["true", "false"], ["false", "true"]),
        (["3", "10", "2"], ["2", "3", "10"]),  # numbers in their order, not as text
        (["ok", "bad", "good"], ["bad", "good", "ok"]),  # no order known: alphabetical
        (["pass", "", None, "  "], ["pass"]),
    ],
)
def test_a_labels_classes_are_read_lowest_first(values, classes):
    assert label_classes(values) == classes


def test_a_human_label_column_is_read_and_its_values_checked_per_row():
    data = table(
        ["q", "verdict", "why"],
        [
            {"q": "a", "verdict": "PASS", "why": ""},
            {"q": "b", "verdict": "fail", "why": "made up a date"},
            {"q": "c", "verdict": "", "why": ""},
        ],
    )
    roles = {"q": "input", "verdict": "human_label", "why": "human_note"}
    settings = human_settings(data, roles)
    assert settings == {
        "label_column": "verdict",
        "note_column": "why",
        "classes": ["fail", "PASS"],
        "threshold": 0.5,
    }
    assert [human_of_row(row, settings, i + 2) for i, row in enumerate(data.rows)] == [
        {"label": "PASS"},
        {"label": "fail", "note": "made up a date"},
        None,  # nobody labelled it
    ]
    wrong = refused(human_of_row, {"verdict": "maybe"}, settings, 9)
    assert (wrong.code, wrong.row, wrong.column) == ("unknown_label", 9, "verdict")
    assert wrong.params["classes"] == "fail, PASS"
    # The human columns never reach the metric.
    case = build_cases(data, roles)[1]
    assert case == {"input": {"q": "b"}, "output": None, "expected": None}


def test_a_human_score_is_on_its_scale_as_read_or_as_declared():
    data = table(["q", "rating"], [{"q": "a", "rating": "4"}, {"q": "b", "rating": "2"}])
    roles = {"q": "input", "rating": "human_score"}
    assert human_settings(data, roles)["scale"] == [2.0, 4.0]
    declared = human_settings(data, roles, scale=(1, 5), threshold=0.7)
    assert declared["scale"] == [1.0, 5.0] and declared["threshold"] == 0.7
    assert human_of_row({"rating": "4"}, declared) == {"score": 4.0}
    outside = refused(human_of_row, {"rating": "7"}, declared, 3)
    assert (outside.code, outside.row, outside.params["value"]) == ("outside_scale", 3, "7")
    not_number = refused(human_of_row, {"rating": "great"}, declared, 4)
    assert (not_number.code, not_number.row, not_number.column) == ("not_a_number", 4, "rating")
    assert refused(human_settings, data, roles, scale=(5, 1)).code == "bad_scale"


def test_declared_classes_win_and_their_number_is_bounded():
    data = table(["q", "h"], [{"q": "a", "h": "ok"}, {"q": "b", "h": "bad"}])
    roles = {"q": "input", "h": "human_label"}
    assert human_settings(data, roles, classes=parse_classes("bad, ok, good"))["classes"] == [
        "bad",
        "ok",
        "good",
    ]
    one = table(["q", "h"], [{"q": "a", "h": "ok"}])
    assert refused(human_settings, one, roles).code == "too_few_classes"
    many = table(["q", "h"], [{"q": str(i), "h": f"kind {i}"} for i in range(12)])
    too_many = refused(human_settings, many, roles)
    assert (too_many.code, too_many.params["count"]) == ("too_many_classes", 12)


def test_a_column_called_just_human_is_a_score_or_a_label_as_its_values_say():
    assert human_role_of(["1", "5", "3", ""]) == "human_score"
    assert human_role_of(["1", "0", "1"]) == "human_label"
    assert human_role_of(["pass", "fail"]) == "human_label"


def test_the_human_columns_are_guessed_by_their_names_one_a_role():
    from submissions.datasets import guess_roles

    roles = guess_roles(
        ["question", "answer", "human_label", "human_note", "human_label_bob", "human_note_bob"]
    )
    assert roles == {
        "question": "input",
        "answer": "output",
        "human_label": "human_label",
        "human_note": "human_note",
        # A second person's columns reach neither the metric nor the comparison.
        "human_label_bob": "ignore",
        "human_note_bob": "ignore",
    }
    assert guess_roles(["q", "human_rating"])["human_rating"] == "human_score"
    # A note alone says nothing to compare with: ignored.
    assert guess_roles(["q", "human_note"])["human_note"] == "ignore"
