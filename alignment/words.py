"""Why a judge cannot be aligned, or its prompt accepted, in the reader's words (called at
request time: the codes are alignment.plans', alignment.services' and
contract.judge_prompt's)."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from wording import words

SENTENCES = {
    # alignment.plans
    "not_done": gettext_lazy(
        "The evaluation has not ended well: align a judge from one that is done."
    ),
    "no_human": gettext_lazy(
        "This evaluation has no human labels or scores to align the judge with."
    ),
    "no_recorded_output": gettext_lazy(
        "This evaluation ran an artifact rather than scoring recorded outputs: align a judge from an evaluation of recorded outputs."
    ),
    "no_version": gettext_lazy(
        "This evaluation's metric is not a saved version: save it, evaluate it, then align it."
    ),
    "helper_files": gettext_lazy(
        "This metric imports helper files: only a judge whose metric.py stands alone can be aligned."
    ),
    "no_models": gettext_lazy(
        "The metric has no metric model or reflection model: choose them in the playground first."
    ),
    # contract.judge_prompt
    "syntax_error": gettext_lazy("metric.py does not parse."),
    "no_llm_call": gettext_lazy(
        "This metric never calls llm(): it is not a judge, so there is no prompt to align."
    ),
    "no_prompt_constant": gettext_lazy(
        'The judge\'s prompt is not a constant: put it in one, such as JUDGE_PROMPT = """...""", and pass it to llm().'
    ),
    "f_string": gettext_lazy(
        "The prompt %(name)s is an f-string: its text is made as it runs. Make it a plain string and fill it with .format() in score()."
    ),
    "concatenated": gettext_lazy(
        "The prompt %(name)s is made of several strings joined: write it as one string (a triple-quoted one can span lines)."
    ),
    "not_text": gettext_lazy("The prompt %(name)s is bytes, not text."),
    "assigned_again": gettext_lazy(
        "The prompt %(name)s is assigned more than once: assign it once, at the top of the file."
    ),
    "several_targets": gettext_lazy(
        "The prompt %(name)s is assigned together with other names: give it a line of its own."
    ),
    # alignment.services
    "already_accepted": gettext_lazy("This run's best prompt was accepted already."),
    "not_finished": gettext_lazy("The run has not finished with a best prompt yet."),
    "nothing_better": gettext_lazy(
        "The run's best prompt is the one it started from: there is nothing new to save."
    ),
    "dataset_gone": gettext_lazy("The labelled rows of this alignment were deleted."),
}


def refusal_words(code: str, params: Mapping | None = None) -> str:
    """The sentence for a refusal `code` with its params."""
    params = dict(params or {})
    if code == "too_few_labelled":
        count = params.get("count", 0)
        return ngettext(
            "Only %(count)s row has a person's judgement: aligning a judge needs at least "
            "%(needed)s.",
            "Only %(count)s rows have a person's judgement: aligning a judge needs at least "
            "%(needed)s.",
            count,
        ) % {"count": count, "needed": params.get("needed", 0)}
    if code == "dataset_problem":
        inner = dict(params.get("params") or {})
        return words(params.get("code"), inner, family="dataset")
    if code == "evaluation_refused":
        return words(params.get("code"), params.get("params") or {}, family="evaluation_refusal")
    sentence = SENTENCES.get(code)
    if sentence is None:
        return _("This judge cannot be aligned (%(code)s).") % {"code": code}
    try:
        return str(sentence) % params if "%(" in str(sentence) else str(sentence)
    except (KeyError, TypeError, ValueError):
        return str(sentence)
