"""What the start page shows of a plan, in the reader's language and number format."""

from __future__ import annotations

from alignment.plans import MIN_LABELLED, RATIOS, SEED, Plan
from evaluations.charts import number
from wording import format_count

# The prompt's first lines the page shows (the rest is the run's to rewrite).
SHOWN_LINES = 8


def start_page(plan: Plan) -> dict:
    prompt = plan.prompt
    lines = prompt.value.splitlines() or [""]
    human = plan.columns.human
    return {
        "metric_name": plan.version.metric.name,
        "version_number": plan.version.number,
        "metric_id": plan.version.metric_id,
        "constant": prompt.name,
        "line": prompt.line,
        "first_lines": "\n".join(lines[:SHOWN_LINES]),
        "more_lines": max(0, len(lines) - SHOWN_LINES),
        "labelled": len(plan.rows),
        "labelled_text": format_count(len(plan.rows)),
        "kind": plan.kind,
        "classes": ", ".join(human.get("classes") or []),
        "threshold": number(human.get("threshold", 0.5)),
        "scale": " – ".join(number(x) for x in human.get("scale") or ()),
        "splits": [
            {"name": name, "count": plan.counts[name], "percent": percent}
            for name, percent in zip(("train", "validation", "test"), RATIOS, strict=True)
        ],
        "seed": SEED,
        "judge_model": plan.judge_model,
        "reflection_model": plan.reflection_model,
        "inputs": list(plan.columns.inputs),
        "output": plan.columns.output,
        "expected": list(plan.columns.expected),
        "person": [c for c in plan.columns.person if c],
        "minimum": MIN_LABELLED,
    }
