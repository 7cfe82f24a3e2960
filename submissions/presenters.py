"""A draft and a run, shaped for their templates in the reader's language."""

from __future__ import annotations

from django.utils.translation import ngettext

import dataset_files
from checks import presenters as check_presenters
from messages import reference_rows, words
from messages.wizard import ENGINE_NAMES, ROLE_NAMES, SPLIT_NAMES, STEP_TITLES
from submissions import rules, services
from submissions.models import FORM_STEPS, STEPS, Draft


def reachable(found: dict) -> set[str]:
    """Steps the user may open: every step up to and including the first incomplete one."""
    reachable = set()
    for step in STEPS:
        reachable.add(step)
        if step in found:
            break
    return reachable


def preview(draft: Draft) -> dict | None:
    dataset = draft.dataset
    if dataset is None:
        return None
    return {
        "dataset": dataset,
        "columns": dataset.columns,
        "rows": [
            [dataset_files.safe_cell(row.get(column)) for column in dataset.columns]
            for row in dataset.preview
        ],
        "total": dataset.row_count,
        "warnings": [
            words(w.get("code"), w.get("params"), family="dataset_warning")
            for w in dataset.warnings
        ],
    }


# A split with fewer rows than this gets a warning: its score moves by 10 points or more
# with a single row, too coarse to compare candidates on. Not a refusal: a small dataset
# for a first try is fine, as long as the user knows.
FEW_SPLIT_ROWS = 10


def small_split_warnings(counts: dict[str, int]) -> list[str]:
    """A warning for each split with some rows but fewer than FEW_SPLIT_ROWS (an empty
    split is one the user chose to leave out)."""
    return [
        ngettext(
            "The %(split)s split has only %(count)s row: a score on it moves by a large step "
            "with each row. Aim for at least %(minimum)s.",
            "The %(split)s split has only %(count)s rows: a score on it moves by a large "
            "step with each row. Aim for at least %(minimum)s.",
            count,
        )
        % {"split": SPLIT_NAMES[name], "count": count, "minimum": FEW_SPLIT_ROWS}
        for name, count in counts.items()
        if 0 < count < FEW_SPLIT_ROWS
    ]


def split_counts(facts: dict | None, found: dict) -> list | None:
    if facts is None or "dataset" in found:
        return None
    return [(SPLIT_NAMES[name], count) for name, count in facts["counts"].items()]


def step_context(state: rules.DraftState, step: str, *, form=None, upload=None) -> dict:
    """Everything step.html shows for `step`: the stepper, the form, and per step its extras."""
    draft = state.draft
    found = state.problems
    open_steps = reachable(found)
    steps = []
    done = True  # a step counts as done only when every step before it is done too
    for index, step_id in enumerate(STEPS):
        done = done and step_id not in found and step_id != "review"
        if step_id == "dataset":
            done = done and state.dataset_saved
        steps.append(
            {
                "id": step_id,
                "number": index + 1,
                "title": STEP_TITLES[step_id],
                "done": done,
                "current": step_id == step,
                "reachable": step_id in open_steps,
            }
        )
    index = STEPS.index(step)
    context = {
        "draft": draft,
        "step": step,
        "steps": steps,
        "step_title": STEP_TITLES[step],
        "previous": STEPS[index - 1] if index else None,
        "form": form,
        "problems": {k: words(p.code, p.params, family="step") for k, p in found.items()},
        "check_state": state.check_state,
    }
    if step == "dataset":
        context["upload"] = upload
        context["preview"] = preview(draft)
        context["max_bytes"] = dataset_files.MAX_BYTES
        context["counts"] = split_counts(state.facts, found)
        if context["counts"] is not None:
            context["split_warnings"] = small_split_warnings(state.facts["counts"])
    if step in ("check", "review"):
        context["check"] = draft.contract_check
        context["rendered"] = (
            check_presenters.present(draft.contract_check) if draft.contract_check else None
        )
        context["reference_rows"] = reference_rows()
        context["gate_open"] = not found
        context["blocking"] = [
            (STEP_TITLES[s], found[s]) for s in STEPS if s in found and s != "check"
        ]
        if not any(s in found for s in FORM_STEPS):
            context["sample_rows"] = state.facts["sample_rows"]
    if step == "review" and not found:
        context["summary"] = services.run_config(draft, split_rows=False)
        context.update(config_rows(context["summary"]))
        context["split_warnings"] = small_split_warnings(
            context["summary"]["dataset"]["splits"]["counts"]
        )
    return context


def config_rows(config: dict) -> dict:
    """The engine, the column roles and the split counts of a run configuration, worded."""
    return {
        "engine_name": ENGINE_NAMES.get(config["engine"]["resolved"], ""),
        "role_rows": [
            (column, ROLE_NAMES.get(role, role))
            for column, role in config["dataset"]["columns"].items()
        ],
        "split_rows": [
            (SPLIT_NAMES[name], count)
            for name, count in config["dataset"]["splits"]["counts"].items()
        ],
    }
