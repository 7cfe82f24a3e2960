"""Column roles to cases; expected is None when a row has no Output value."""

from __future__ import annotations

import pytest

from dataset_files import Table, build_cases, parse_dataset


def _table() -> Table:
    text = "id,question,label,notes,score\n1,hi?,greeting,x,1\n2,bye?, ,y,\n3,what?,,z,0\n"
    return parse_dataset(text.encode(), filename="data.csv")


def test_cases_from_roles():
    roles = {"question": "input", "id": "input", "label": "output", "score": "output"}
    cases = build_cases(_table(), roles)
    assert cases == [
        {
            "input": {"id": "1", "question": "hi?"},
            "output": None,
            "expected": {"label": "greeting", "score": "1"},
        },
        # Both Output cells empty (a lone space counts as empty): no reference.
        {"input": {"id": "2", "question": "bye?"}, "output": None, "expected": None},
        # One Output cell filled: expected keeps every Output column.
        {
            "input": {"id": "3", "question": "what?"},
            "output": None,
            "expected": {"label": "", "score": "0"},
        },
    ]


def test_unlisted_and_ignored_columns_are_left_out():
    cases = build_cases(_table(), {"question": "input", "notes": "ignore"})
    assert cases[0] == {"input": {"question": "hi?"}, "output": None, "expected": None}


def test_jsonl_values_and_missing_keys():
    data = b'{"q": "a", "gold": {"x": 1}}\n{"q": "b"}\n{"q": "c", "gold": 0}\n'
    table = parse_dataset(data, filename="d.jsonl")
    cases = build_cases(table, {"q": "input", "gold": "output"})
    assert [case["expected"] for case in cases] == [{"gold": {"x": 1}}, None, {"gold": 0}]


def test_no_input_column(raises_code):
    raises_code("no_input_column", build_cases, _table(), {"label": "output", "id": "ignore"})


def test_unknown_column(raises_code):
    error = raises_code(
        "unknown_column", build_cases, _table(), {"question": "input", "nope": "output"}
    )
    assert error.column == "nope"


@pytest.mark.parametrize("role", ["Input", "target", None])
def test_bad_role(raises_code, role):
    error = raises_code("bad_role", build_cases, _table(), {"question": role})
    assert (error.column, error.params) == ("question", {"role": role})


def test_hand_built_table():
    table = Table(columns=["a"], rows=[{"a": 1}], format="jsonl", encoding="utf-8")
    assert build_cases(table, {"a": "input"}) == [
        {"input": {"a": 1}, "output": None, "expected": None}
    ]
    assert table.file_row(0) == 1
