"""Aligning a judge with people: starting one (a dataset version of the labelled rows, a
wizard draft whose GEPA run rewrites the judge's prompt, and its contract check) and
accepting its best prompt (a new version of the metric, and an evaluation comparing it
with the seed version on the held-out rows).

The run itself is the wizard's: the user submits the draft from its review step as any
other, once the check passed, and follows it on the usual run page. Nothing is submitted
for them: the submit is where a run's spending is agreed to.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

import dataset_files
from alignment import rows, sources
from alignment.models import Alignment
from alignment.plans import RATIOS, SEED, Plan
from checks import services as check_services
from contract import judge_prompt
from evaluations import start as evaluation_start
from evaluations.models import Evaluation
from evaluations.selection import default_selection
from evaluations.services import EvaluationRefused
from metrics import services as metric_services
from runs.models import Run
from submissions import services as submit_services
from submissions.datasets import compute_facts, dataset_settings
from submissions.models import Draft, Engine


class AlignRefused(Exception):
    """A start or an accept that cannot be done: `code` (alignment.words), params."""

    def __init__(self, code: str, **params) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


def draft_values(plan: Plan, dataset, budget: int) -> dict:
    """The wizard draft's fields: the judge's prompt as a Python program's artifact, the
    agreement metric inline, the person's columns as the expected values, the splits by
    ratio, the judge's model as the task model, GEPA."""
    columns = plan.columns
    types = plan.settings["column_types"]
    human = columns.human
    # A label compares as text (a "1" stays "1"), a score as a number, a note is text.
    person_types = {
        human.get("label_column"): "text",
        human.get("score_column"): "number",
        human.get("note_column"): "text",
    }
    roles = {column: "input" for column in columns.program_inputs}
    roles.update({column: "output" for column in columns.person})
    column_types = {
        column: person_types[column] if roles[column] == "output" else types[column]
        for column in roles
    }
    metric_name = plan.version.metric.name
    name = _("Align %(metric)s with people") % {"metric": metric_name}
    return {
        "name": name[:120],
        "artifact_kind": "python",
        "artifact_content": plan.prompt.value,
        "program_source": sources.program_source(
            plan.version.source, plan.prompt.name, columns, metric_name
        ),
        "dataset": dataset,
        "roles": {column: roles.get(column, "ignore") for column in dataset.columns},
        "column_types": column_types,
        "split_mode": Draft.SplitMode.RATIO,
        "train_percent": RATIOS[0],
        "validation_percent": RATIOS[1],
        "test_percent": RATIOS[2],
        "seed": SEED,
        "split_column": "",
        "metric_mode": Draft.MetricMode.INLINE,
        "metric_version": None,
        "inline_source": sources.agreement_source(columns),
        "task_model": plan.judge_model,
        "reflection_model": plan.reflection_model,
        "metric_model": "",
        "engine": Engine.GEPA,
        "budget": budget,
    }


@transaction.atomic
def alignment_start(
    plan: Plan, *, budget: int
) -> tuple[Alignment, check_services.CheckRefused | None]:
    """Start aligning the plan's judge: (the alignment, why its contract check did not
    start, or None). AlignRefused when its rows cannot be stored or read as the
    draft needs (past the storage quota, a value that does not fit)."""
    owner = plan.evaluation.owner
    try:
        dataset = rows.dataset_version(plan)
    except dataset_files.DatasetError as exc:
        raise AlignRefused(
            "dataset_problem",
            code=exc.code,
            params={**exc.params, "row": exc.row, "column": exc.column},
        ) from None
    draft = submit_services.draft_create(owner=owner)
    for field, value in draft_values(plan, dataset, budget).items():
        setattr(draft, field, value)
    facts = compute_facts(dataset, **dataset_settings(draft))
    if facts["problem"] is not None:
        raise AlignRefused("dataset_problem", **facts["problem"])
    # Marked as saved: the wizard counts the dataset step done once its settings were.
    draft.dataset_facts = {**facts, "saved": True}
    draft.save()
    alignment = Alignment.objects.create(
        owner=owner,
        evaluation=plan.evaluation,
        seed_version=plan.version,
        constant=plan.prompt.name,
        draft=draft,
        dataset=dataset,
        settings=plan.settings,
    )
    try:
        submit_services.draft_check_start(draft)
    except check_services.CheckRefused as refused:
        # The alignment stands; the check step's button starts the check when allowed.
        return alignment, refused
    return alignment, None


def best_text(run: Run) -> str | None:
    """The run's best prompt once it finished; None before, or for a run that found none."""
    if run.status != Run.Status.FINISHED:
        return None
    text = ((run.result or {}).get("best") or {}).get("text")
    return text if isinstance(text, str) else None


def held_out_selection(settings: dict) -> dict:
    return default_selection(
        split="test", mode="ratio", ratios=list(settings["ratios"]), seed=settings["seed"]
    )


@transaction.atomic
def alignment_accept(alignment: Alignment, run: Run, owner: AbstractBaseUser) -> Evaluation:
    """Save the run's best prompt as a new version of the judge (its source the seed's with
    only the constant's text changed), and evaluate the seed and the new version on the
    held-out rows. AlignRefused (nothing written) when it cannot be accepted, or when the
    evaluation is refused (its code in params["code"]: the user's evaluation limits)."""
    locked = Alignment.objects.select_for_update().get(pk=alignment.pk)
    if locked.accepted_at is not None:
        raise AlignRefused("already_accepted")
    text = best_text(run)
    if text is None:
        raise AlignRefused("not_finished")
    seed = locked.seed_version
    found = judge_prompt.find_constant(seed.source, locked.constant)
    if isinstance(found, judge_prompt.NoPrompt):
        raise AlignRefused(found.code, **found.params)
    if text == found.value:
        raise AlignRefused("nothing_better")
    if locked.dataset_id is None:
        raise AlignRefused("dataset_gone")
    source = judge_prompt.replace_prompt(seed.source, locked.constant, text)
    metric = seed.metric
    version, _created = metric_services.metric_save(metric, source=source, files=seed.helper_files)
    evaluation = _compare(locked, owner, seed, version)
    locked.accepted_version = version
    locked.comparison = evaluation
    locked.accepted_at = timezone.now()
    locked.save(update_fields=["accepted_version", "comparison", "accepted_at"])
    alignment.accepted_version, alignment.comparison = version, evaluation
    alignment.accepted_at = locked.accepted_at
    return evaluation


def _compare(alignment: Alignment, owner, seed, version) -> Evaluation:
    """The seed version and the new one scoring the held-out rows of the alignment's
    dataset, read as the source evaluation read them."""
    settings = alignment.settings
    dataset = evaluation_start.get_dataset_for_user(owner, alignment.dataset_id)
    roles, types = dict(settings["roles"]), dict(settings["column_types"])
    recorded = settings["recorded_column"]
    selection = held_out_selection(settings)
    try:
        human = evaluation_start.human_settings(dataset, roles, settings["human"])
        picked = evaluation_start.selected_rows(dataset, selection)
        evaluation_start.check_values(dataset, picked, roles, recorded, types, human)
    except dataset_files.DatasetError as exc:
        raise AlignRefused(
            "dataset_problem",
            code=exc.code,
            params={**exc.params, "row": exc.row, "column": exc.column},
        ) from None
    try:
        return evaluation_start.evaluation_start_for_metric(
            owner,
            metric=seed.metric,
            version=seed,
            dataset=dataset,
            roles=roles,
            recorded_column=recorded,
            selection=selection,
            total=len(picked),
            column_types=types,
            second=Evaluation.Second.COMPARE,
            second_version=version,
            human=human,
        )
    except EvaluationRefused as refused:
        raise AlignRefused("evaluation_refused", code=refused.code, params=refused.params) from None
