"""Ratio splits, split columns, counts and the contract check's sample."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dataset_files import counts, parse_dataset, sample_cases, split_by_column, split_by_ratio


def test_ratio_split_is_deterministic_for_a_seed():
    first = split_by_ratio(100, train=0.7, validation=0.15, test=0.15, seed=42)
    again = split_by_ratio(100, train=0.7, validation=0.15, test=0.15, seed=42)
    other = split_by_ratio(100, train=0.7, validation=0.15, test=0.15, seed=43)
    assert first == again
    assert first != other
    assert counts(first) == {"train": 70, "validation": 15, "test": 15}
    assert sorted(first["train"] + first["validation"] + first["test"]) == list(range(100))
    assert all(split == sorted(split) for split in first.values())


def test_string_seeds_work():
    assert split_by_ratio(10, train=0.5, validation=0.5, test=0, seed="run-7") == split_by_ratio(
        10, train=0.5, validation=0.5, test=0, seed="run-7"
    )


def test_largest_remainder_sizes():
    # 10 * (1/3, 1/3, 1/3) = 3.33 each: the leftover row goes to train.
    third = 1 / 3
    assert counts(split_by_ratio(10, train=third, validation=third, test=third, seed=0)) == {
        "train": 4,
        "validation": 3,
        "test": 3,
    }
    # 7 * (0.5, 0.25, 0.25) = 3.5, 1.75, 1.75: remainders .75 win over .5.
    assert counts(split_by_ratio(7, train=0.5, validation=0.25, test=0.25, seed=0)) == {
        "train": 3,
        "validation": 2,
        "test": 2,
    }


def test_empty_and_train_only():
    assert split_by_ratio(0, train=0.8, validation=0.1, test=0.1, seed=1) == {
        "train": [],
        "validation": [],
        "test": [],
    }
    assert split_by_ratio(4, train=1, validation=0, test=0, seed=1)["train"] == [0, 1, 2, 3]


@given(
    n=st.integers(min_value=0, max_value=2000),
    weights=st.tuples(
        st.floats(min_value=0.01, max_value=1),
        st.floats(min_value=0, max_value=1),
        st.floats(min_value=0, max_value=1),
    ),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_splits_partition_and_follow_the_ratios(n, weights, seed):
    total = sum(weights)
    train, validation = weights[0] / total, weights[1] / total
    test = 1 - train - validation  # so the three sum to 1 within float error
    test = max(test, 0.0)
    splits = split_by_ratio(n, train=train, validation=validation, test=test, seed=seed)
    assert sorted(splits["train"] + splits["validation"] + splits["test"]) == list(range(n))
    for name, ratio in (("train", train), ("validation", validation), ("test", test)):
        assert abs(len(splits[name]) - n * ratio) <= 1 + 1e-6
    assert splits == split_by_ratio(n, train=train, validation=validation, test=test, seed=seed)


@pytest.mark.parametrize(
    ("ratios", "reason"),
    [
        ({"train": 0.5, "validation": 0.3, "test": 0.3}, "sum_not_one"),
        ({"train": 0.7, "validation": 0.2, "test": 0.05}, "sum_not_one"),
        ({"train": 1.2, "validation": -0.2, "test": 0}, "negative"),
        ({"train": 0, "validation": 0.5, "test": 0.5}, "train_zero"),
        ({"train": "0.8", "validation": 0.1, "test": 0.1}, "not_number"),
        ({"train": float("nan"), "validation": 0.1, "test": 0.1}, "not_number"),
        ({"train": True, "validation": 0, "test": 0}, "not_number"),
    ],
)
def test_bad_ratios(raises_code, ratios, reason):
    error = raises_code("bad_ratios", split_by_ratio, 10, seed=1, **ratios)
    assert error.params["reason"] == reason
    assert error.params["validation"] == ratios["validation"]


def test_ratios_within_tolerance_are_fine():
    splits = split_by_ratio(10, train=0.7 + 1e-10, validation=0.2, test=0.1, seed=0)
    assert counts(splits) == {"train": 7, "validation": 2, "test": 1}


def _split_table(values: list[str]):
    text = "q,split\n" + "".join(f"q{i},{value}\n" for i, value in enumerate(values))
    return parse_dataset(text.encode(), filename="data.csv")


def test_split_column_mapping():
    values = [
        "train",
        "Training",
        " TEST ",
        "testing",
        "validation",
        "Valid",
        "val",
        "DEV",
        "train",
    ]
    splits = split_by_column(_split_table(values), "split")
    assert splits == {"train": [0, 1, 8], "validation": [4, 5, 6, 7], "test": [2, 3]}
    assert counts(splits) == {"train": 3, "validation": 4, "test": 2}


def test_split_column_unknown_value(raises_code):
    error = raises_code(
        "unknown_split_value", split_by_column, _split_table(["train", "holdout"]), "split"
    )
    assert (error.row, error.column) == (3, "split")
    assert error.params == {"value": "holdout", "index": 1}


def test_split_column_empty_value(raises_code):
    error = raises_code(
        "empty_split_value", split_by_column, _split_table(["train", "test", " "]), "split"
    )
    assert (error.row, error.column, error.params) == (4, "split", {"index": 2})


def test_split_column_json_values(raises_code):
    table = parse_dataset(b'{"s": "train"}\n\n{"s": 1}\n', filename="d.jsonl")
    error = raises_code("unknown_split_value", split_by_column, table, "s")
    assert (error.row, error.params) == (3, {"value": 1, "index": 1})
    missing = parse_dataset(b'{"s": "train"}\n{"q": 1}\n', filename="d.jsonl")
    assert raises_code("empty_split_value", split_by_column, missing, "s").row == 2


def test_split_column_unknown_column(raises_code):
    error = raises_code("unknown_column", split_by_column, _split_table(["train"]), "fold")
    assert error.column == "fold"


def _cases(n: int, without_expected: set[int] = frozenset()) -> list[dict]:
    return [
        {"input": {"i": i}, "output": None, "expected": None if i in without_expected else {"y": i}}
        for i in range(n)
    ]


def test_sample_three_distinct_train_rows():
    splits = split_by_ratio(50, train=0.6, validation=0.2, test=0.2, seed=3)
    chosen = sample_cases(splits, _cases(50), seed=9)
    assert len(chosen) == len(set(chosen)) == 3
    assert set(chosen) <= set(splits["train"])
    assert chosen == sample_cases(splits, _cases(50), seed=9)
    assert chosen == sorted(chosen)


def test_sample_prefers_rows_with_expected():
    splits = {"train": [0, 1, 2, 3, 4, 5], "validation": [], "test": []}
    cases = _cases(6, without_expected={0, 2, 3, 5})  # only rows 1 and 4 have one
    for seed in range(20):
        chosen = sample_cases(splits, cases, seed=seed)
        assert len(set(chosen)) == 3
        assert {1, 4} <= set(chosen)
    # Rows without an expected value still make up the sample when they must.
    assert len(sample_cases(splits, _cases(6, without_expected=set(range(6))), seed=0)) == 3


def test_sample_k_and_too_few(raises_code):
    splits = {"train": [4, 7], "validation": [0, 1, 2], "test": [3, 5, 6]}
    error = raises_code("too_few_train_cases", sample_cases, splits, _cases(8), seed=0)
    assert error.params == {"count": 2, "needed": 3}
    assert sample_cases(splits, _cases(8), k=2, seed=0) == [4, 7]
