"""Words for the metric converter's notes (contract.convert) and for why it could not read
a file at all.

The converter stores a code, a line and params for each place it could not decide; these
turn them into a sentence in the reader's language. The `# convert:` comments it leaves
in the code say the same in English, since the code is Python whatever the language.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from wording.contract import check_problem_words
from wording.formatting import table_words

NOTES = {
    "no_metric_function": _(
        "No metric was found: no function takes DSPy's (example, prediction) or gepa's "
        "(data, response), and none is named score. The file was left as it was."
    ),
    "several_metric_functions": _(
        "Several functions could be the metric (%(names)s), so nothing was converted. Say "
        "which one is the metric, or rename it score, and convert again."
    ),
    "other_metric_functions": _(
        "%(name)s was left as it was: %(chosen)s is the metric that became score."
    ),
    "score_name_taken": _(
        "The module already uses the name score for something else, so %(name)s was not "
        "converted. Rename that score and convert again."
    ),
    "parameter_names_clash": _(
        "%(name)s has a parameter named like one of score's (%(names)s), so it was not "
        "converted. Rename the parameter and convert again."
    ),
    "trace_used": _(
        "trace is always None in the workbench, and the metric still reads it here. Check "
        "what this code does with None."
    ),
    "pred_name_used": _(
        "pred_name is always None in the workbench, and the metric still reads it here. "
        "Check what this code does with None."
    ),
    "pred_trace_used": _(
        "pred_trace is always None in the workbench, and the metric still reads it here. "
        "Check what this code does with None."
    ),
    "program_trace_used": _(
        "program_trace is always None in the workbench, and the metric still reads it here. "
        "Check what this code does with None."
    ),
    "extra_arguments_used": _(
        "%(name)s is always empty in the workbench, and the metric still reads it here."
    ),
    "example_method_used": _(
        "%(name)s is now a dict of the case's columns, which has no %(method)s method. "
        "Rewrite this line."
    ),
    "example_passed_on": _(
        "%(name)s is now a dict of the case's input and expected columns, not a "
        "dspy.Example. Check that what receives it here accepts a dict."
    ),
    "prediction_used": _(
        "%(name)s was the whole prediction; output is the program's output field, or a dict "
        "of them when there are several. Check this line."
    ),
    "prediction_fields": _(
        "The metric reads several fields of the prediction (%(fields)s), so output is read "
        "as a dict of them. That holds only when the dataset has each of them as an output "
        "column."
    ),
    "return_not_understood": _(
        'This return was left as it was. Make it return a pair: the score and {"feedback": "..."}.'
    ),
    "feedback_needed": _(
        "This return gives only a score, so its feedback is empty. Write feedback that says "
        "what is wrong and what a correct output looks like."
    ),
    "dspy_still_used": _(
        "This still uses dspy. In the workbench dspy's LM is the metric model, which "
        "llm() calls too; check this part by hand."
    ),
    "gepa_still_used": _(
        "This still uses gepa, which a metric in the workbench does not need. Check this "
        "part by hand."
    ),
    "old_name_called": _(
        "This calls the metric by its old name, %(name)s, with its old arguments; score "
        "takes (input, output, expected)."
    ),
    "evaluator_needs_arguments": _(
        "%(name)s() needs arguments: give them where the module makes the evaluator."
    ),
    "imports_added": _(
        "The metric used names it never imported; these import lines were added: %(lines)s."
    ),
    "names_not_defined": _(
        "%(names)s: used but never defined or imported, and no import is known for it. "
        "Bring the code that defines it from where the metric came from."
    ),
    "convert_comment": _(
        "A # convert: comment from a conversion is still here. Do what it says, then delete it."
    ),
}

# Why a file could not be converted at all (syntax errors are worded as the check words
# them).
ERRORS = {
    "not_utf8": _(
        "%(path)s is not UTF-8 text (bad byte at line %(line)s, column %(column)s). Save it "
        "as UTF-8."
    ),
    "internal_error": _("The converter could not rewrite this metric: %(msg)s"),
    "too_costly": _(
        "Converting this metric needed more than the converter's limits: %(seconds)s s "
        "of CPU time or %(megabytes)s MB of memory. Convert a shorter file: move long "
        "helpers out of metric.py."
    ),
    "convert_busy": _("Another conversion of yours is still running. Wait for it, then try again."),
    "convert_rate_limited": _(
        "You have converted %(limit)s metrics in the last minute. Wait a moment, then try again."
    ),
}


def _listed(params: Mapping) -> dict:
    return {
        key: ", ".join(str(item) for item in value) if isinstance(value, list | tuple) else value
        for key, value in params.items()
    }


def note_words(code: str | None, params: Mapping) -> str:
    """One sentence for a converter's note."""
    return table_words(NOTES, code, _listed(params))


def convert_error_words(code: str | None, params: Mapping) -> str:
    """Why a file could not be converted: a ConvertError's code, or not_utf8."""
    if code == "syntax_error":
        return check_problem_words("syntax_error", {"reason": "syntax", **params})
    return table_words(ERRORS, code, params)
