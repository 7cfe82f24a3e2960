"""The one catalogue of codes and their words, in the reader's language.

The contract check engine (`contract`), the model providers (`providers`), the dataset
reader (`dataset_files`), the allowances and the submit wizard report codes and
parameters, never prose. This package holds the words for every one of those codes, one
file per family, and turns a code into a sentence at display time, so a result stored once
reads correctly in English, Spanish and Hindi:

- `contract`: the check engine's stages, statuses, problems, hints and cases files;
- `sandbox`: the sandbox's layers, why it is unavailable on a worker, its modes;
- `providers`: a model call that failed, and a review over the model budget;
- `limits`: what the allowances refuse (checks, reviews, evaluations);
- `datasets`: the dataset package's errors and warnings;
- `api`: the JSON API's errors;
- `files`: a metric's helper files past a limit, and what an upload of them did;
- `wizard`: the submit wizard's steps, rules, engines, roles and splits;
- `results`: a stored check result rendered, and the docs' tables shown beside it;
- `codes`: every code a check result can carry, for the translation tests;
- `formatting`: how a sentence takes its parameters, and how numbers are written.

`words(code, params, family=...)` is the one lookup of a code's words. Codes are unique
within a family, not across families ("timeout" is a problem, a run status and a model
error), hence the family.

It may import django.utils.translation (and Django's filesizeformat for file sizes),
`contract`, `providers`, `dataset_files` and `skynet`; never `checks`, `metrics`,
`submissions`, `docs_site` or `skynet_web`, which import it (pyproject.toml's import
contracts hold it to that).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from wording.api import api_error_words
from wording.contract import cases_error_words, check_problem_words, hint_words
from wording.datasets import dataset_error_words, dataset_warning_words
from wording.files import file_problem_words
from wording.formatting import UNKNOWN, fill, format_count, format_number, format_usd
from wording.limits import (
    evaluation_refusal_words,
    refusal_words,
    review_refusal_words,
    waiting_words,
)
from wording.providers import model_error_words, reach_words
from wording.results import feedback_examples, reference_rows, render
from wording.sandbox import sandbox_unavailable_words
from wording.wizard import step_problem_words

# Each family of codes, and what its codes' parameters are.
FAMILIES: dict[str, Callable[[str | None, Mapping], str]] = {
    # A stage's or a case's problem in a check result (contract.codes.PROBLEMS).
    "check": check_problem_words,
    # A hint's code and params (contract.codes.HINTS).
    "hint": hint_words,
    # A CasesError: its code, with "line" among the params.
    "cases": cases_error_words,
    # A SandboxUnavailable reason, with its "detail".
    "sandbox": sandbox_unavailable_words,
    # A model_error code with the provider's "message" (or review_over_budget).
    "model": model_error_words,
    # Why a model's endpoint cannot be reached (providers.reachability), with its "host"
    # and the test's "seconds".
    "reach": reach_words,
    # A CheckRefused code, with the "limit" it hit.
    "refusal": refusal_words,
    # A ReviewRefused code.
    "review_refusal": review_refusal_words,
    # An EvaluationRefused code, with its params (limit; cases, max; projected_usd,
    # per_case_usd, max_usd).
    "evaluation_refusal": evaluation_refusal_words,
    # A DatasetError code, with its "row" and "column" among the params.
    "dataset": dataset_error_words,
    # A dataset warning (dataset_files.WARNINGS).
    "dataset_warning": dataset_warning_words,
    # A wizard step's problem (submissions.rules.Problem): its own, artifact or dataset codes.
    "step": step_problem_words,
    # An error of the JSON API (api.errors), with its params (field, limit, date, ...).
    "api": api_error_words,
    # Why a queued check waits (checks.fair_share.waiting), with "ahead".
    "waiting": waiting_words,
    # A metric's helper files past a limit (contract.files), or an upload of them refused.
    "files": file_problem_words,
}


def words(code: str | None, params: Mapping | None = None, *, family: str = "check") -> str:
    """The sentence for `code` of `family` with `params`, in the active language.

    The family defaults to the check engine's problems, the codes a stored result carries.
    A code the family does not know reads "Unknown problem (code)."; a missing parameter
    reads "?"; neither raises.
    """
    try:
        lookup = FAMILIES[family]
    except KeyError:
        raise ValueError(f"no family of codes named {family!r}") from None
    return lookup(code, dict(params or {}))


__all__ = [
    "FAMILIES",
    "UNKNOWN",
    "feedback_examples",
    "fill",
    "format_count",
    "format_number",
    "format_usd",
    "reference_rows",
    "render",
    "words",
]
