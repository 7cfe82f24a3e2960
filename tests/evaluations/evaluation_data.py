"""A dataset of known rows for the evaluation tests, stored as an upload is."""

from __future__ import annotations

import csv
import io

LABELS = ("billing", "bug", "account", "other")

# Right when the recorded output is the label; a missing label raises KeyError; the
# output "pair" returns a bare float (not a pair).
LABEL_METRIC = """
def score(input, output, expected=None):
    if output == "boom":
        raise KeyError("boom")
    if output == "pair":
        return 0.5
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct label."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""


def output_of(i: int) -> str:
    """Row i's recorded output: every 10th raises, row 5 is not a pair, every 4th is right."""
    if i % 10 == 0 and i:
        return "boom"
    if i == 5:
        return "pair"
    return LABELS[i % 4] if i % 4 == 0 else "other"


def make_dataset(owner, rows: int):
    from submissions.services import dataset_create

    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "label", "output"])
    for i in range(rows):
        out.writerow([f"question {i}", LABELS[i % 4], output_of(i)])
    return dataset_create(owner=owner, filename=f"rows-{rows}.csv", data=text.getvalue().encode())
