"""What aligning an evaluation's judge would do, read before anything is written: whether
it can (`refusal`, cheap enough for the results page's link), and then the plan the start
page shows and the start service carries out (`plan_for`).

A judge can be aligned when its evaluation ended, scored recorded outputs (the rows hold
what the judge judged), and has at least MIN_LABELLED rows a person labelled; and when its
metric version is a judge whose prompt is a constant (contract.judge_prompt) in a
metric.py with no helper files (the run's program carries metric.py alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import dataset_files
from alignment.sources import Columns
from contract import judge_prompt
from contract.judge_prompt import JudgePrompt
from evaluations.models import Evaluation
from metrics.models import MetricVersion
from submissions.datasets import column_types
from submissions.models import Dataset

MIN_LABELLED = 20
# The labelled rows' splits: GEPA learns on train, picks on validation, and the accepted
# prompt is compared with the seed on test, which the run never saw.
RATIOS = (60, 20, 20)
SEED = 0
DEFAULT_BUDGET = 150


class NotAlignable(Exception):
    """Why this evaluation's judge cannot be aligned: `code` (alignment.words) and params."""

    def __init__(self, code: str, **params) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class Plan:
    evaluation: Evaluation
    # The evaluation's dataset, without its rows.
    dataset: Dataset
    version: MetricVersion
    prompt: JudgePrompt
    columns: Columns
    # The dataset rows (indexes) a person labelled, in the evaluation's order.
    rows: list[int]
    counts: dict[str, int]
    judge_model: str
    reflection_model: str

    @property
    def kind(self) -> str:
        return "score" if self.columns.human.get("score_column") else "label"

    @property
    def kept_columns(self) -> list[str]:
        """The columns of the dataset version, in the dataset's order: what the judge
        reads, and the person's."""
        wanted = {*self.columns.program_inputs, *self.columns.person}
        return [column for column in self.dataset.columns if column in wanted]

    @property
    def settings(self) -> dict:
        """How the dataset version's rows are read, as the evaluation read them; what
        accepting later evaluates the held-out rows with."""
        evaluation = self.evaluation
        kept = self.kept_columns
        types = column_types(self.dataset, evaluation.column_types)
        return {
            "roles": {column: evaluation.roles.get(column, "ignore") for column in kept},
            "column_types": {column: types.get(column, "text") for column in kept},
            "recorded_column": evaluation.recorded_column,
            "human": dict(evaluation.human),
            "ratios": list(RATIOS),
            "seed": SEED,
        }


def _human_kind(evaluation: Evaluation) -> str:
    return "score" if (evaluation.human or {}).get("score_column") else "label"


def labelled_cases(evaluation: Evaluation):
    """The evaluation's cases a person judged, in its order."""
    return evaluation.cases.filter(human__has_key=_human_kind(evaluation)).order_by("index")


def labelled_count(evaluation: Evaluation) -> int:
    """How many of its cases a person judged: the summary's count (computed when it ended),
    else counted."""
    counted = ((evaluation.summary or {}).get("human") or {}).get("labelled")
    if isinstance(counted, int):
        return counted
    return labelled_cases(evaluation).count()


def refusal(evaluation: Evaluation) -> NotAlignable | None:
    """Why the evaluation's judge cannot be aligned, or None when it can (its models
    aside: plan_for says when they are missing)."""
    if evaluation.status != Evaluation.Status.DONE:
        return NotAlignable("not_done")
    if not evaluation.human:
        return NotAlignable("no_human")
    if not evaluation.recorded_column:
        return NotAlignable("no_recorded_output")
    version = evaluation.metric_version
    if version is None:
        return NotAlignable("no_version")
    if version.helper_files:
        return NotAlignable("helper_files")
    labelled = labelled_count(evaluation)
    if labelled < MIN_LABELLED:
        return NotAlignable("too_few_labelled", count=labelled, needed=MIN_LABELLED)
    # Last: reading the source is the costliest of these (tens of ms for a long file).
    found = judge_prompt.find_judge_prompt(version.source)
    if isinstance(found, judge_prompt.NoPrompt):
        return NotAlignable(found.code, **found.params)
    return None


def plan_for(evaluation: Evaluation) -> Plan:
    """The plan of aligning the evaluation's judge; NotAlignable when it cannot be."""
    refused = refusal(evaluation)
    if refused is not None:
        raise refused
    version = evaluation.metric_version
    assert version is not None
    metric = version.metric
    judge_model = metric.metric_model or metric.reflection_model
    reflection_model = metric.reflection_model or metric.metric_model
    if not judge_model:
        raise NotAlignable("no_models")
    found = judge_prompt.find_judge_prompt(version.source)
    assert isinstance(found, JudgePrompt)
    roles = evaluation.roles or {}
    dataset = Dataset.objects.defer("raw", "rows", "row_numbers", "preview").get(
        pk=evaluation.dataset_id
    )
    columns = dataset.columns
    plan_columns = Columns(
        inputs=tuple(c for c in columns if roles.get(c) == "input"),
        output=evaluation.recorded_column,
        expected=tuple(c for c in columns if roles.get(c) == "output"),
        human=dict(evaluation.human),
    )
    rows = list(labelled_cases(evaluation).values_list("row", flat=True))
    train, validation, test = (value / 100 for value in RATIOS)
    splits = dataset_files.split_by_ratio(
        len(rows), train=train, validation=validation, test=test, seed=SEED
    )
    return Plan(
        evaluation=evaluation,
        dataset=dataset,
        version=version,
        prompt=found,
        columns=plan_columns,
        rows=rows,
        counts=dataset_files.counts(splits),
        judge_model=judge_model,
        reflection_model=reflection_model,
    )
