"""Words for the submit wizard: its steps, its completeness rules, engines, roles, splits."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from wording.contract import ARTIFACT_ERRORS, PROBLEMS, stage_words
from wording.datasets import DATASET_ERRORS, HUMAN_ROLE_NAMES, dataset_error_words
from wording.formatting import UNKNOWN, fill, table_words

# The wizard's own completeness rules (submissions.rules.Problem codes).
STEP_PROBLEMS = {
    "template_empty": _("Write the prompt template."),
    "program_empty": _("Write program.py: define run(artifact, input) and return the output."),
    "no_run_function": PROBLEMS["no_run_function"],
    "dspy_program_empty": _(
        "Write program.py: define program, an instance of a dspy.Module, such as "
        'program = dspy.ChainOfThought("question -> answer").'
    ),
    "no_program": PROBLEMS["no_program"],
    "no_dataset": _("Upload a dataset."),
    "no_metric": _("Pick a saved metric version."),
    "metric_empty": _("Write metric.py."),
    "no_task_model": _("Pick the task model."),
    "no_reflection_model": _("Pick the reflection model."),
    "engine_kind": _(
        "%(engine)s cannot optimize this artifact kind; pick Auto or the engine the "
        "kind works with."
    ),
    "check_required": _("Run the contract check and let it pass before you submit."),
    # DSPy GEPA reads "predictor_feedback" by the program's predictor names.
    "predictor_feedback_unknown": _(
        '"predictor_feedback" in the metric names %(names)s, but program has no predictor '
        "of that name. Its predictors are: %(predictors)s. Use those names in metric.py, "
        "then run the check again."
    ),
    "already_submitted": _("This draft was already submitted."),
}

ENGINE_NAMES = {"auto": _("Auto"), "gepa": _("GEPA"), "dspy_gepa": _("DSPy GEPA")}

# Why Auto chose the engine it did, by the artifact's kind (the docs' Engines table).
AUTO_REASONS = {
    "prompt": _(
        "Auto chose GEPA: it optimizes prompt templates and Python programs, and this "
        "artifact is a prompt template."
    ),
    "python": _(
        "Auto chose GEPA: it optimizes prompt templates and Python programs, and this "
        "artifact is a Python program."
    ),
    "dspy": _("Auto chose DSPy GEPA: it optimizes DSPy programs, and this artifact is one."),
}

STEP_TITLES = {
    "artifact": _("Artifact"),
    "dataset": _("Dataset"),
    "metric": _("Metric"),
    "models": _("Models and engine"),
    "check": _("Contract check"),
    "review": _("Review and submit"),
}

ROLE_NAMES = {
    "input": _("Input"),
    "output": _("Output"),
    "ignore": _("Ignored"),
    **HUMAN_ROLE_NAMES,
}
# A column's type (dataset_files.COLUMN_TYPES): what its values reach the metric as.
TYPE_NAMES = {"number": _("Number"), "text": _("Text"), "json": _("JSON")}
SPLIT_NAMES = {"train": _("train"), "validation": _("validation"), "test": _("test")}


def step_problem_words(code: str | None, params: Mapping) -> str:
    """Why a step is not complete: the wizard's own codes, artifact and dataset codes."""
    params = dict(params)
    if code == "metric_static":
        return stage_words(params.get("stage") or {})
    if code == "engine_kind":
        params["engine"] = ENGINE_NAMES.get(params.get("engine"), params.get("engine"))
    if code in STEP_PROBLEMS:
        return fill(STEP_PROBLEMS[code], params)
    if code in ARTIFACT_ERRORS:
        return fill(ARTIFACT_ERRORS[code], params)
    if code in DATASET_ERRORS:
        return dataset_error_words(code, params)
    return fill(UNKNOWN, {"code": code})


# What changed since the wizard's check ran (submissions.rules.DraftState.changes).
STALE_PARTS = {
    "artifact": _("the artifact"),
    "dataset": _("the data file"),
    "role": _("the role of column %(column)s"),
    "type": _("the type of column %(column)s"),
    "splits": _("the splits"),
    "metric": _("the metric"),
    "task_model": _("the task model"),
    "reflection_model": _("the reflection model"),
    "metric_model": _("the metric model"),
    "sample": _("the sample cases"),
}


def stale_words(changes: list[tuple[str, Mapping]]) -> str:
    """Why the last check no longer counts, naming what changed when it is known."""
    if not changes:
        return str(
            _(
                "Something changed since the last check (the artifact, the dataset, the "
                "metric or the models). Run the check again."
            )
        )
    named = ", ".join(table_words(STALE_PARTS, code, params) for code, params in changes)
    return str(_("Changed since the last check: %(changes)s. Run the check again.")) % {
        "changes": named
    }
