"""Convert within bounds: long constant data is set aside while the passes run and put
back word for word, and a conversion that needs more than its CPU seconds or memory ends
with "too_costly" instead of holding the process that asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.convert import ConvertError, convert
from contract.convert.bounded import convert_bounded
from contract.convert.conversion import _convert
from contract.convert.elide import MIN_CONSTANTS, elide, restore

PUBLIC = sorted((Path(__file__).parents[1] / "public_metrics").glob("*.py"))
PUBLIC = [path for path in PUBLIC if not path.name.startswith("__")]

DSPY = """\
import dspy


def metric(example, prediction, trace=None):
    return dspy.Prediction(score=float(example.answer == prediction.answer), feedback="")
"""


def numbers(count: int, per_line: int = 0) -> str:
    items = [str(i % 997 - 3) for i in range(count)]
    if not per_line:
        return "[" + ", ".join(items) + "]"
    rows = [", ".join(items[i : i + per_line]) for i in range(0, count, per_line)]
    return "[\n    " + ",\n    ".join(rows) + ",\n]"


def test_the_placeholders_keep_every_line_and_restore_the_text():
    source = DSPY + f"\nTABLE = {numbers(400, per_line=20)}  # kept\nLAST = 1\n"
    elided, taken = elide(source)
    assert len(taken) == 1
    assert len(elided) < len(source) // 4
    assert elided.count("\n") == source.count("\n")
    assert elided.splitlines()[-1] == "LAST = 1"
    assert restore(elided, taken) == source


def test_only_constant_data_with_many_items_is_set_aside():
    small = numbers(MIN_CONSTANTS - 1)
    with_a_name = "[x, " + ", ".join("1" for _ in range(200)) + "]"
    unpacked = "{**BASE, " + ", ".join(f"'k{i}': {i}" for i in range(200)) + "}"
    returned = "def table():\n    return {" + ", ".join(f"'k{i}': {i}" for i in range(200)) + "}\n"
    for kept in (f"A = {small}\n", f"B = {with_a_name}\n", f"C = {unpacked}\n", returned):
        assert elide(kept) == (kept, {})
    nested = "D = {'a': (1, -2.5, 'x', None, b'y'), " + ", ".join(
        f"'k{i}': [{i}, {i}]" for i in range(100)
    )
    nested += "}\n"
    elided, taken = elide(nested)
    assert list(taken.values()) == [nested[4:-1]]


@pytest.mark.parametrize("path", PUBLIC, ids=lambda path: path.stem)
def test_a_published_metric_with_long_data_converts_as_without_it(path):
    """Every metric of tests/public_metrics, with long tables before and after its
    code, converts to what the converter makes without setting them aside: the same
    text, the same notes on the same lines."""
    source = (
        f"LABELS = {numbers(300, per_line=25)}\n\n"
        + path.read_text()
        + f"\n\nWEIGHTS = ({', '.join(f'{i / 7:.3f}' for i in range(500))})\n"
    )
    fast = convert(source)
    slow = _convert(source)
    assert fast == slow
    assert "WEIGHTS = (0.000, 0.143" in fast.source


def test_a_source_that_does_not_parse_says_so_as_before():
    source = DSPY + f"\nTABLE = {numbers(300)}\nbroken = (\n"
    with pytest.raises(ConvertError) as raised:
        convert(source)
    assert raised.value.code == "syntax_error"
    assert raised.value.line == source.count("\n")


def test_the_child_gives_what_convert_gives():
    source = DSPY + f"\nTABLE = {numbers(2000)}\n"
    assert convert_bounded(source) == convert(source)
    with pytest.raises(ConvertError) as raised:
        convert_bounded("def metric(example, prediction):\n    return (\n")
    assert raised.value.code == "syntax_error"
    assert raised.value.params["reason"] == "syntax"


def test_a_conversion_past_its_cpu_seconds_is_ended():
    """Code, unlike data, cannot be set aside: 200 KB of helper functions is more than a
    one-second budget, and the answer says which limits it passed."""
    helpers = "".join(
        f"def helper_{i}(a, b):\n    if a > b:\n        return a - b\n    return b + a * {i}\n\n"
        for i in range(3000)
    )
    with pytest.raises(ConvertError) as raised:
        convert_bounded(DSPY + helpers, seconds=1, megabytes=2048)
    assert raised.value.code == "too_costly"
    assert raised.value.params == {"seconds": 1, "megabytes": 2048}
