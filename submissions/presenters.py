"""A draft and a run, shaped for their templates in the reader's language."""

from __future__ import annotations

import math

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

import dataset_files
from checks import presenters as check_presenters
from providers.projection import MINIBATCH_LIMITS
from submissions import datasets, projection, rules, services
from submissions.models import FORM_STEPS, STEPS, Draft
from wording import format_count, reference_rows, words
from wording.wizard import (
    AUTO_REASONS,
    ENGINE_NAMES,
    ROLE_NAMES,
    SPLIT_NAMES,
    STEP_TITLES,
    TYPE_NAMES,
    stale_words,
)


def reachable(found: dict) -> set[str]:
    """Steps the user may open: every step up to and including the first incomplete one."""
    reachable = set()
    for step in STEPS:
        reachable.add(step)
        if step in found:
            break
    return reachable


def preview(draft: Draft, types: dict[str, str] | None = None) -> dict | None:
    """The dataset's first rows, each value as the metric will get it under `types`
    (the form's, else the draft's saved ones)."""
    dataset = draft.dataset
    if dataset is None:
        return None
    if types is None:
        types = datasets.column_types(dataset, draft.column_types)
    return {
        "dataset": dataset,
        "columns": dataset.columns,
        "rows": datasets.preview_cells(dataset, types),
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
    return [(SPLIT_NAMES[name], format_count(count)) for name, count in facts["counts"].items()]


def step_context(state: rules.DraftState, step: str, *, form=None, upload=None) -> dict:
    """Everything step.html shows for `step`: the stepper, the form, and per step its extras."""
    draft = state.draft
    found = state.problems
    open_steps = reachable(found)
    steps = []
    # A step's tick is its own: replacing the data file leaves the metric and the models
    # as filled in as they were. The check's waits on every step before it.
    every_before = True
    for index, step_id in enumerate(STEPS):
        done = step_id not in found and step_id != "review"
        if step_id == "dataset":
            done = done and state.dataset_saved
        if step_id == "check":
            done = done and every_before
        every_before = every_before and done
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
        "stale_text": stale_words(state.changes) if state.check_state == "stale" else "",
    }
    if step == "dataset":
        context["upload"] = upload
        chosen = form.chosen_types() if hasattr(form, "chosen_types") else None
        context["preview"] = preview(draft, chosen)
        context["max_bytes"] = dataset_files.MAX_BYTES
        context["counts"] = split_counts(state.facts, found)
        if context["counts"] is not None:
            context["split_warnings"] = small_split_warnings(state.facts["counts"])
    if step == "models":
        gate = projection.gate_for_draft(draft, chosen_minibatch(form, draft))
        context["minibatch_gate"] = gate_view(gate)
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
        context["projection"] = projection_view(context["summary"]["projection"])
    return context


def config_rows(config: dict) -> dict:
    """The engine, the column roles and types and the split counts of a run
    configuration, worded (a configuration from before column types has none)."""
    engine = config["engine"]
    types = config["dataset"].get("types") or {}
    kind = (config.get("artifact") or {}).get("kind", "")
    return {
        "engine_name": ENGINE_NAMES.get(engine["resolved"], ""),
        # Said only when Auto made the choice.
        "engine_reason": AUTO_REASONS.get(kind, "") if engine.get("chosen") == "auto" else "",
        "role_rows": [
            (column, ROLE_NAMES.get(role, role), TYPE_NAMES.get(types.get(column), ""))
            for column, role in config["dataset"]["columns"].items()
        ],
        "split_rows": [
            (SPLIT_NAMES[name], format_count(count))
            for name, count in config["dataset"]["splits"]["counts"].items()
        ],
    }


# -- the projection (submissions.projection) ----------------------------------------

# Why a line of the projection is not measured (providers.projection's codes).
PROJECTION_REASONS = {
    "no_evaluation": gettext_lazy("no evaluation measured it"),
    "no_cases": gettext_lazy("the evaluation scored no case"),
    "model_changed": gettext_lazy("the evaluation ran another model than this draft has now"),
    "no_artifact_run": gettext_lazy(
        "the evaluation scored recorded outputs, so the task model never ran"
    ),
    "no_timing": gettext_lazy("the evaluation recorded no times"),
    "no_feedback_lengths": gettext_lazy("the evaluation recorded no feedback lengths"),
    "no_case_sizes": gettext_lazy("the evaluation kept no case to size the reflection prompt by"),
    "no_reflection_model": gettext_lazy("no reflection model is chosen"),
    "price_unknown": gettext_lazy("the model catalogue has no price for the reflection model"),
    "nothing_measured": gettext_lazy("none of its parts is measured"),
}
PROJECTION_PARTS = {
    "task_usd": gettext_lazy("Task model"),
    "metric_usd": gettext_lazy("Metric model"),
    "reflection_usd": gettext_lazy("Reflection model"),
}


def usd(value: float) -> str:
    """An amount in US dollars in the reader's locale: cents, or up to 4 decimals for an
    amount below 10 cents, so that a small one never reads as nothing."""
    if 0 < value < 0.0001:
        return _("less than %(amount)s") % {"amount": usd(0.0001)}
    decimals = 2 if value >= 0.1 or value == 0 else 3 if value >= 0.01 else 4
    # number_format cuts the digits off; rounded first, it shows the nearest amount.
    amount = number_format(round(value, decimals), decimal_pos=decimals, force_grouping=True)
    return _("$%(amount)s") % {"amount": amount}


def duration(seconds: float) -> str:
    """A duration in whole seconds, minutes, hours or days, whichever reads best."""
    if seconds < 120:
        count = round(seconds)
        text = ngettext("%(count)s second", "%(count)s seconds", count)
    elif seconds < 120 * 60:
        count = round(seconds / 60)
        text = ngettext("%(count)s minute", "%(count)s minutes", count)
    elif seconds < 48 * 3600:
        count = round(seconds / 3600)
        text = ngettext("%(count)s hour", "%(count)s hours", count)
    else:
        count = round(seconds / 86400)
        text = ngettext("%(count)s day", "%(count)s days", count)
    return text % {"count": number_format(count, force_grouping=True)}


def _span(low: float, high: float, word) -> str:
    low_text, high_text = word(low), word(high)
    if low_text == high_text:
        return low_text
    return _("%(low)s to %(high)s") % {"low": low_text, "high": high_text}


def _row(label, line: dict, word) -> dict:
    if "reason" in line:
        reason = PROJECTION_REASONS.get(line["reason"], line["reason"])
        return {"label": label, "value": "", "reason": str(reason)}
    return {"label": label, "value": _span(line["low"], line["high"], word), "reason": ""}


def projection_view(data: dict | None) -> dict | None:
    """The stored projection worded: one row per cost, the total and the time, each a
    range or why it is not measured. None for a run configuration without one."""
    if data is None:
        return None
    rows = [_row(PROJECTION_PARTS[name], data[name], usd) for name in PROJECTION_PARTS]
    total = _row(_("Total"), data["total_usd"], usd)
    if data["total_missing"] and total["value"]:
        parts = ", ".join(str(PROJECTION_PARTS[name]) for name in data["total_missing"])
        total["note"] = _("not counting: %(parts)s") % {"parts": parts}
    total["total"] = True
    rows.append(total)
    rows.append(_row(_("Run time"), data["time_s"], duration))
    calls, iterations = data["calls"], data["iterations"]
    notes = []
    if "budget_below_valset" in data["notes"]:
        notes.append(
            ngettext(
                "The budget is no more than the %(count)s row GEPA compares candidates on: "
                "scoring the starting candidate spends it, and no reflection call is left.",
                "The budget is no more than the %(count)s rows GEPA compares candidates on: "
                "scoring the starting candidate spends it, and no reflection call is left.",
                data["valset_size"],
            )
            % {"count": format_count(data["valset_size"])}
        )
    if "prompt_over_context" in data["notes"]:
        notes.append(
            _(
                "At the high end, a reflection prompt would not fit in the reflection "
                "model's context window."
            )
        )
    return {
        "evaluation": data["evaluation"],
        "minibatch": data["minibatch"],
        # A projection stored before the minibatch gate has none.
        "minibatch_gate": gate_view(data.get("minibatch_gate")),
        "rows": rows,
        "calls": _span(calls["low"], calls["high"], _count),
        "iterations": _span(iterations["low"], iterations["high"], _count),
        "notes": notes,
    }


def _count(value: float) -> str:
    return number_format(round(value), force_grouping=True)


# -- the minibatch gate (submissions.projection.gate_for_draft) ------------------------


def chosen_minibatch(form, draft: Draft) -> int:
    """The minibatch size the models step shows: as posted when it is one, else the
    draft's."""
    low, high = MINIBATCH_LIMITS
    value = form["minibatch"].value() if form is not None and "minibatch" in form.fields else None
    try:
        size = int(value)
    except (TypeError, ValueError):
        return draft.minibatch
    return size if low <= size <= high else draft.minibatch


def _percent(share: float) -> str:
    """A chance as a whole percent, rounded down: 0.9017 is 90, never 91, and a chance
    below COIN_TOSS never reads as that line."""
    return number_format(math.floor(share * 100 + 1e-9))


def _plain_number(value: float) -> str:
    """A step as the reader writes it: 0.1 ("0,1" in Spanish), 1, 0.25."""
    value = float(f"{value:.3g}")
    return number_format(int(value) if value.is_integer() else value)


def gate_words(gate: dict) -> str:
    """What a measured gate says when it is a coin toss, in the reader's language: how
    often the metric changed its verdict, what the chance of a right call is at the
    chosen size, and what would make it 90%. "" when it is no coin toss."""
    if not gate.get("coin_toss"):
        return ""
    sentences = []
    k, flip = gate.get("k"), gate.get("flip_share")
    if isinstance(k, int) and isinstance(flip, int | float):
        sentences.append(
            ngettext(
                "Scored %(k)s time, this metric changed its verdict on %(share)s%% of cases.",
                "Scored %(k)s times, this metric changed its verdict on %(share)s%% of cases.",
                k,
            )
            % {"k": k, "share": number_format(round(flip * 100))}
        )
    sentences.append(
        _(
            "At a minibatch of %(minibatch)s, a candidate better by %(step)s wins the "
            "minibatch comparison only %(chance)s%% of the time — close to a coin toss."
        )
        % {
            "minibatch": gate["minibatch"],
            "step": _plain_number(gate["step"]),
            "chance": _percent(gate["right_call"]),
        }
    )
    size = gate.get("minibatch_for")
    chance = _percent(gate["right_call_for"])
    if size is not None:
        said = _(
            "A minibatch of %(size)s would make it %(chance)s%%; temperature 0 for the "
            "metric model removes most of this noise."
        )
    else:
        said = _(
            "Even a minibatch of %(size)s would make it only %(chance)s%%; temperature 0 "
            "for the metric model removes most of this noise."
        )
    sentences.append(said % {"size": size or MINIBATCH_LIMITS[1], "chance": chance})
    return " ".join(sentences)


MEASURE_WORDS = gettext_lazy(
    "This metric calls a model, so it may score the same output differently each time, "
    "and GEPA's minibatch comparison may then keep or drop a candidate by chance. "
    "Evaluate the draft with each case scored several times to measure how much."
)


def gate_note(gate: dict) -> str:
    """What a measured gate that is no coin toss says: the chance of a right call."""
    return _(
        "At a minibatch of %(minibatch)s, a candidate better by %(step)s wins the "
        "minibatch comparison %(chance)s%% of the time."
    ) % {
        "minibatch": gate["minibatch"],
        "step": _plain_number(gate["step"]),
        "chance": _percent(gate["right_call"]),
    }


def gate_view(gate: dict | None) -> dict | None:
    """The stored gate worded: "warning" for a coin toss, else "note" (the chance of a
    right call); or "measure" for a judge whose noise nothing measured. None for a metric
    that calls no model: there is nothing to say."""
    if not gate:
        return None
    view = {"warning": "", "note": "", "measure": False, "measure_text": ""}
    if not gate.get("measured"):
        return {**view, "measure": True, "measure_text": str(MEASURE_WORDS)}
    warning = gate_words(gate)
    return {**view, "warning": warning, "note": "" if warning else gate_note(gate)}


def gate_message(view: dict | None) -> str:
    """The one thing a gate's view says, for a surface with one line (the API)."""
    view = view or {}
    return view.get("warning") or view.get("note") or view.get("measure_text") or ""
