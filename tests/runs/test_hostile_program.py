"""A DSPy program that lies to the worker about what dspy did, checked in real sandboxes
the way the worker checks it: what the worker stores of the check is what a child that
kept to skynet.dspy_part's limits could have sent, not the 12 MB trace of each case."""

from __future__ import annotations

import json

import pytest

from checks.models import Check
from skynet.dspy_part import PART_LIMIT, TEXT_LIMIT, TRACE_LIMIT
from tests.submissions.test_submit_wizard import fill_to_check, run_check_now

pytestmark = pytest.mark.django_db

PREAMBLE = """import os

import dspy
from skynet import _dspy_program, _state, wire

BIG = "x" * 1_000_000
STEP = {"predictor": "self", "inputs": {"question": BIG}, "outputs": {"label": BIG}}
"""

# The program's own process runs the child's code: it replaces what the child calls to
# run it and returns a 12 MB trace, for the child to send.
REPLACED_RUN = (
    PREAMBLE
    + """
def run(program, instructions, input, engine=None):
    return {"label": "billing"}, [STEP] * 6

_dspy_program.run = run
program = dspy.Predict("question -> label")
"""
)

# Or it writes the frame to the worker itself, past anything the child would cut.
RAW_FRAME = (
    PREAMBLE
    + """
def run(program, instructions, input, engine=None):
    _state.channel().sendall(wire.encode({
        "type": "run_finished",
        "outcome": "returned",
        "output": {"t": "str", "v": "billing"},
        "output_repr": "'billing'",
        "dspy": {"fields": {"label": "billing"}, "trace": [STEP] * 6},
    }))
    os._exit(0)

_dspy_program.run = run
program = dspy.Predict("question -> label")
"""
)


@pytest.mark.parametrize("program", [REPLACED_RUN, RAW_FRAME], ids=["replaced-run", "raw-frame"])
def test_a_programs_oversize_trace_is_stored_cut_to_the_childs_limits(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks, program
):
    fill_to_check(owner_client, draft, saved_metric, kind="dspy", source=program)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    rows = check.result["cases"]
    assert len(rows) == 3
    for row in rows:
        # Cut, not refused: the case ran and was scored.
        assert row["status"] == "valid", row
        part = row["run"]["dspy"]
        assert part["fields"] == {"label": "billing"}
        steps = part["trace"]
        assert 0 < len(steps) <= TRACE_LIMIT
        assert all(len(step["inputs"]["question"]) <= TEXT_LIMIT for step in steps)
        assert len(json.dumps(part)) < PART_LIMIT + 1_000
    # 37.7 MB per check before; now at most the part limit per case, and little else.
    stored = Check.objects.values_list("result", flat=True).get(pk=check.pk)
    assert len(json.dumps(stored)) < len(rows) * PART_LIMIT + 100_000
