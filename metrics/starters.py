"""Starter metrics from the docs' examples, each with three sample cases that fit it."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from contract.cases import DEFAULT_CASES


@dataclass(frozen=True)
class Starter:
    key: str
    title: Promise
    source: str
    cases: tuple[dict, ...]
    # One line under the "Start from" picker: what the starter scores and how.
    description: Promise


LABEL_CASES = tuple(case.to_job() for case in DEFAULT_CASES)

EXACT_MATCH = """def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""

SEVERAL_CHECKS = """import json


def score(input, output, expected=None):
    try:
        data = json.loads(output)
    except ValueError as exc:
        return 0.0, {"feedback": f"Output is not valid JSON: {exc}", "scores": {"format": 0.0, "fields": 0.0}}
    want = expected["fields"]
    found = [key for key in want if key in data]
    fields = len(found) / len(want) if want else 1.0
    missing = [key for key in want if key not in data]
    feedback = "All fields present." if not missing else f"Missing fields: {', '.join(missing)}."
    return 0.5 + 0.5 * fields, {"feedback": feedback, "scores": {"format": 1.0, "fields": fields}}
"""

FIELD_CASES = (
    {
        "input": {"text": "Invoice 1042 from Acme, due 2026-12-01, total 310 EUR."},
        "output": '{"number": "1042", "vendor": "Acme", "due": "2026-12-01", "total": 310}',
        "expected": {"fields": ["number", "vendor", "due", "total"]},
        "observation": None,
    },
    {
        "input": {"text": "Invoice 88 from Globex, total 12 USD."},
        "output": '{"number": "88", "vendor": "Globex"}',
        "expected": {"fields": ["number", "vendor", "total"]},
        "observation": None,
    },
    {
        "input": {"text": "Receipt from Initech for 4 USD."},
        "output": '{"vendor": "Initech", "total": 4,}',
        "expected": {"fields": ["vendor", "total"]},
        "observation": None,
    },
)

MODEL_AS_JUDGE = """from skynet import llm


def score(input, output, expected=None):
    verdict = llm(
        "Answer PASS or FAIL, then give one sentence of reasons.",
        input=f"Question: {input['question']}\\nAnswer: {output}",
    )
    passed = str(verdict).strip().upper().startswith("PASS")
    return (1.0 if passed else 0.0), {"feedback": str(verdict)}
"""

# The judge's instructions are one module-level string constant, so that "Improve the
# judge against the human labels" can find the prompt and rewrite it, and nothing else.
JUDGE_WITH_LABELS = """from skynet import llm

JUDGE_PROMPT = \"\"\"You grade an answer to a question.
Answer PASS when the answer is correct and answers what was asked, FAIL otherwise.
Then give one sentence of reasons.\"\"\"


def score(input, output, expected=None):
    verdict = str(llm(JUDGE_PROMPT, input=f"Question: {input['question']}\\nAnswer: {output}"))
    passed = verdict.strip().upper().startswith("PASS")
    return (1.0 if passed else 0.0), {"feedback": verdict}
"""

# A judge needs no expected value: a question, and an answer to judge (right, wrong, right).
JUDGE_CASES = (
    {
        "input": {"question": "What is the capital of France?"},
        "output": "Paris.",
        "expected": None,
        "observation": None,
    },
    {
        "input": {"question": "How many legs does a spider have?"},
        "output": "Six.",
        "expected": None,
        "observation": None,
    },
    {
        "input": {"question": "At what temperature does water boil at sea level, in Celsius?"},
        "output": "100 degrees.",
        "expected": None,
        "observation": None,
    },
)

ACCURACY_SPEED_COST = """from skynet import reward

REWARD_SPEC = {
    "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
    "accuracy": {},
    "speed": {"reference": 2000},
    "cost": {"reference": 0.01},
}


def score(input, output, expected=None):
    ok = output == expected["label"]
    return reward(REWARD_SPEC, 1.0 if ok else 0.0, "Correct." if ok else "Wrong label.")
"""

STARTERS = {
    starter.key: starter
    for starter in (
        Starter(
            "exact_match",
            _("Exact match"),
            EXACT_MATCH,
            LABEL_CASES,
            _("1 when the output equals the expected label, 0 otherwise."),
        ),
        Starter(
            "several_checks",
            _("Several checks"),
            SEVERAL_CHECKS,
            FIELD_CASES,
            _("Reads the output as JSON and scores its format and its fields separately."),
        ),
        Starter(
            "model_as_judge",
            _("Model as judge"),
            MODEL_AS_JUDGE,
            LABEL_CASES,
            _("The metric model says PASS or FAIL; its reasons become the feedback."),
        ),
        Starter(
            "judge_with_labels",
            _("Model as judge, with labels"),
            JUDGE_WITH_LABELS,
            JUDGE_CASES,
            _(
                "A judge whose prompt is one constant, JUDGE_PROMPT: check it against "
                "people's labels, then improve it against them."
            ),
        ),
        Starter(
            "accuracy_speed_cost",
            _("Accuracy, speed and cost"),
            ACCURACY_SPEED_COST,
            LABEL_CASES,
            _("One reward from the label's accuracy and the run's measured time and cost."),
        ),
    )
}
DEFAULT_STARTER = "exact_match"
