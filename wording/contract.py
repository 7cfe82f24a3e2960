"""Words for the contract check engine's codes: stages, statuses, problems, hints, cases.

The engine stores codes and parameters only (contract.codes lists them); these words turn
them into sentences at display time, so a result stored once reads correctly in English,
Spanish and Hindi.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from wording.formatting import UNKNOWN, fill, table_words
from wording.providers import model_error_words
from wording.sandbox import sandbox_unavailable_words

STAGE_NAMES = {
    "load": _("Load"),
    "signature": _("Signature"),
    "reward_spec": _("REWARD_SPEC"),
    "call": _("Calls"),
    "return_value": _("Metric return value"),
}

STAGE_STATUSES = {
    "passed": _("Passed"),
    "failed": _("Failed"),
    "skipped": _("Skipped"),
    "pending": _("Waiting"),
    "running": _("Running"),
}

CASE_STATUSES = {
    "valid": _("Valid"),
    "invalid": _("Invalid"),
    "error": _("Error"),
    "timeout": _("Timed out"),
    "pending": _("Waiting"),
    "skipped": _("Not run"),
}

SKIP_REASONS = {
    "not_defined": _("The metric defines no REWARD_SPEC."),
    "not_static": _("Checked when the metric runs."),
    "run_failed": _("Not reached: every run failed before metric.py was loaded."),
}

# How the artifact's run(artifact, input) went for a case, when the check runs one.
RUN_STATUSES = {
    "ok": _("Ran"),
    "error": _("Error"),
    "timeout": _("Timed out"),
}

SYNTAX_ERRORS = {
    "syntax": _("Syntax error at line %(line)s, column %(column)s: %(msg)s"),
    "null_bytes": _("metric.py contains a null byte at line %(line)s, column %(column)s."),
    "too_complex": _("metric.py is nested too deeply for Python to parse."),
}

BAD_SIGNATURES = {
    "too_few_parameters": _(
        "score must accept (input, output) or (input, output, expected); it takes (%(parameters)s)."
    ),
    "too_many_required": _(
        "score requires more than three arguments; give %(names)s a default value."
    ),
    "required_keyword_only": _(
        "score has a required keyword-only parameter %(names)s; give it a default value."
    ),
    "not_inspectable": _("The parameters of score cannot be read."),
}

# framework_signature (contract.frameworks): a DSPy metric's or a gepa evaluator's
# parameters. Failed: a DSPy-only parameter is there, so the call cannot mean it.
FRAMEWORK_SIGNATURES = {
    "dspy": _(
        "score(%(parameters)s) has the parameters of a DSPy metric, but the contract calls score(input, output, expected): DSPy's gold example (%(gold)s) is the input columns plus expected, the prediction (%(prediction)s) is output, and %(dropped)s are never passed. Use Convert to the contract, or write def score(input, output, expected=None)."
    ),
    "gepa": _(
        "score(%(parameters)s) has the parameters of a gepa evaluator, but the contract calls score(input, output, expected): gepa's data (%(gold)s) is the input columns plus expected, and the response (%(prediction)s) is output. Use Convert to the contract, or write def score(input, output, expected=None)."
    ),
}
# Passed with a warning: only the names suggest another framework; the call works.
FRAMEWORK_SIGNATURE_WARNINGS = {
    "dspy": _(
        "score(%(parameters)s) is named like a DSPy metric. It is called as score(input, output, expected): %(gold)s gets a dict of the input columns only (not a dspy.Example), %(prediction)s gets the output, and the expected values go to a third parameter, expected."
    ),
    "gepa": _(
        "score(%(parameters)s) is named like a gepa evaluator. It is called as score(input, output, expected): %(gold)s gets a dict of the input columns only (without gepa's answer), %(prediction)s gets the output, and the expected values go to a third parameter, expected."
    ),
}
# Passed with a warning: metric.py sets DSPy LMs of its own; in the sandbox the metric
# model answers their calls (runtime/skynet/_dspy_metric.py).
LOAD_WARNINGS = {
    "dspy_lm_replaced": ngettext_lazy(
        "metric.py sets its own DSPy LM (%(models)s). In the sandbox it is never called: its calls go to the metric model, as llm() calls do, metered and within the budget.",
        "metric.py sets its own DSPy LMs (%(models)s). In the sandbox they are never called: their calls go to the metric model, as llm() calls do, metered and within the budget.",
        "count",
    ),
}
# no_score_function when a function of metric.py looks like another framework's metric.
NO_SCORE_BUT = {
    "dspy": _(
        "metric.py does not define a function named score. %(name)s (line %(line)s) looks like a DSPy metric: use Convert to the contract, or rename it score with the parameters (input, output, expected=None)."
    ),
    "gepa": _(
        "metric.py does not define a function named score. %(name)s (line %(line)s) looks like a gepa evaluator: use Convert to the contract, or write a score(input, output, expected=None) that does what it does."
    ),
}

# name_not_imported: with the import line that adds it, one of gepa's types (the sandbox
# has no gepa), or a name nothing is known of.
NAME_NOT_IMPORTED = {
    "import": _("%(name)s is used but never imported: add `%(import)s`."),
    "gepa": _(
        "%(name)s is gepa's and is used but never imported. The sandbox has no gepa: use Convert to the contract, which rewrites the returns it shapes."
    ),
    "unknown": _(
        "%(name)s is used but never defined or imported. If it comes from another cell or file, bring that part too; if from a library, import it."
    ),
}

# no_score_function when the function that looks like a metric is a static method of a
# class, which Convert leaves as it is.
NO_SCORE_IN_CLASS = _(
    "metric.py does not define a function named score. %(name)s (line %(line)s) looks like a DSPy metric kept as a static method of a class: write a module-level score(input, output, expected=None) that does what it does."
)

CRASHES = {
    "exited": _("The metric process exited with status %(exit_code)s without returning a result."),
    "signal": _("The metric process was killed by signal %(signal_name)s."),
    "no_result": _("The metric process ended without returning a result."),
    "protocol": _("The metric process sent a malformed message to the check."),
    "confine_failed": _("The sandbox for the metric process could not be set up."),
    "internal": _("The check could not run this case because of an internal error."),
}

# The call stage when every failed case failed because the task model's call in the
# artifact's run did: the model is named, not the cases ("task_model_error").
TASK_MODEL_UNREACHABLE = _("The task model %(model)s could not be reached: %(message)s")
TASK_MODEL_UNREACHABLE_UNNAMED = _("The task model could not be reached: %(message)s")
TASK_MODEL_UNNAMED = _("The task model failed: %(reason)s")

PROBLEMS = {
    "task_model_error": _("The task model %(model)s failed: %(reason)s"),
    "not_utf8": _(
        "metric.py is not UTF-8 text (bad byte at line %(line)s, column %(column)s). Save it as UTF-8."
    ),
    "file_too_large": _("metric.py is %(size)s bytes; the limit is %(limit)s bytes."),
    "import_error": _("Importing metric.py raised %(type)s: %(message)s"),
    # sandbox.libraries: "available" is the documented set, by import name.
    "module_not_available": _(
        "metric.py imports %(module)s, which the sandbox does not have. Besides the standard library, a metric may import: %(available)s."
    ),
    # contract.local_modules: the metric's own module, not among its helper files.
    "local_module_missing": _("%(module)s is not among this metric's files: add it."),
    "library_unavailable": _(
        "metric.py imports %(module)s, one of the libraries a metric may import, but this worker could not make them available in its sandbox. Ask whoever runs the workbench to look at the worker's log."
    ),
    "library_needs_memory": _(
        "metric.py imports %(module)s (itself or through another library), which needs about %(needed_mb)s MB of memory: more than is left of the %(memory_mb)s MB each process of this sandbox may use. Without a cgroup, each process gets 1/8 of SKYNET_SANDBOX_MEMORY_MB; ask whoever runs the workbench to raise it."
    ),
    "no_score_function": _("metric.py does not define a function named score."),
    "names_not_imported": ngettext_lazy(
        "%(count)s name is used but never imported: %(names)s.",
        "%(count)s names are used but never imported: %(names)s.",
        "count",
    ),
    "timeout": _("Did not finish within the time limit of %(seconds)s s."),
    "cancelled": _("Cancelled: the check was stopped before this finished."),
    "invalid_reward_spec": ngettext_lazy(
        "REWARD_SPEC has %(count)s problem.", "REWARD_SPEC has %(count)s problems.", "count"
    ),
    "cases_failed": ngettext_lazy(
        "%(count)s case did not return a value (case %(cases)s).",
        "%(count)s cases did not return a value (cases %(cases)s).",
        "count",
    ),
    "cases_invalid": ngettext_lazy(
        "%(count)s case returned a value that breaks the contract (case %(cases)s).",
        "%(count)s cases returned a value that breaks the contract (cases %(cases)s).",
        "count",
    ),
    "exception": _("score raised %(type)s: %(message)s"),
    "run_error": _("run raised %(type)s: %(message)s"),
    "run_model_error": _("An llm() call in run failed: %(message)s"),
    "program_syntax_error": _(
        "Syntax error in program.py at line %(line)s, column %(column)s: %(msg)s"
    ),
    "program_import_error": _("Importing program.py raised %(type)s: %(message)s"),
    "no_run_function": _("program.py does not define a function named run."),
    "no_program": _(
        "program.py does not define program, an instance of a dspy.Module, such as "
        'program = dspy.ChainOfThought("question -> answer").'
    ),
    "program_is_class": _(
        "program in program.py is the class %(type)s; make it an instance: program = %(type)s()."
    ),
    "program_not_module": _(
        "program in program.py is a %(type)s, not an instance of a dspy.Module."
    ),
    "no_predictors": _(
        "program in program.py has no predictors (dspy.Predict, dspy.ChainOfThought…) "
        "whose instructions DSPy GEPA could improve."
    ),
    "dspy_unavailable": _(
        "DSPy programs cannot run on this worker: dspy could not be loaded in the "
        "sandbox (%(type)s: %(message)s)."
    ),
    "output_too_large": _(
        "run returned a %(type)s too large to hand to the metric (at most 2 million characters and 100,000 values)."
    ),
    "template_syntax_error": _("The prompt template cannot be read: %(msg)s"),
    "template_field_not_plain": _(
        "The prompt template field %(field)s is not a plain name; use fields like {question}."
    ),
    "template_unknown_field": _(
        "The prompt template uses the field %(field)s, but the case's input has none."
    ),
    # The return-value reasons follow the docs' own table: "No. <why>." A result stored
    # before shapes were named has none; NOT_A_PAIR words those that have one.
    "not_a_pair": _("No. The return value is not a pair of a score and side info."),
    "score_not_number": _("No. The score is a %(type)s, not a number."),
    "score_not_finite": _("No. The score is not a finite number."),
    "side_info_not_dict": _("No. The side info is not a dict."),
    "feedback_missing": _("No. There is no feedback string."),
    "feedback_not_string": _("No. The feedback is a %(type)s, not a string."),
    "scores_not_dict": _('No. The named scores ("scores") are not a dict.'),
    "named_score_not_number": _("No. The named score %(name)s is not a number."),
    "named_score_not_finite": _("No. The named score %(name)s is not a finite number."),
    "predictor_feedback_not_dict": _(
        'No. The feedback per predictor ("predictor_feedback") is a %(type)s, not a dict.'
    ),
    "predictor_name_not_string": _(
        'No. The predictor name %(name)s in "predictor_feedback" is not a string.'
    ),
    "predictor_feedback_not_string": _(
        "No. The feedback of the predictor %(name)s is a %(type)s, not a string."
    ),
    "predictor_feedback_empty": _("No. The feedback of the predictor %(name)s is empty."),
}

# What score returned when it was not a pair, by its shape (contract.shapes.describe).
SHAPES = {
    "number": _("a %(type)s (%(value)s)"),
    "bool": _("a bool (%(value)s)"),
    "string": _("a string (%(value)s)"),
    "none": _("None (no value)"),
    "dict": _("a dict with the keys %(keys)s"),
    "dict_empty": _("an empty dict"),
    "dspy_prediction": _("a dspy.%(class)s with the fields %(keys)s"),
    "dspy_prediction_empty": _("an empty dspy.%(class)s"),
    "gepa_result": _("gepa's EvaluationResult (score, feedback, objective_scores)"),
    "tuple": ngettext_lazy("a tuple of %(count)s value", "a tuple of %(count)s values", "count"),
    "list": ngettext_lazy("a list of %(count)s value", "a list of %(count)s values", "count"),
    "object": _("an object of type %(type)s"),
}

# not_a_pair, by the shape that came back: what it is, and why it is not the contract's.
NOT_A_PAIR = {
    # The docs' row for 0.8.
    "number": _("No. There is no side info: score returned %(shape)s."),
    "bool": _("No. There is no side info: score returned %(shape)s."),
    "dict": _(
        "No. score returned %(shape)s; the contract wants the score and the side info as a pair, not one dict."
    ),
    "dspy_prediction": _(
        "No. score returned %(shape)s, as a DSPy GEPA metric does; the contract wants a pair of the score and a side-info dict."
    ),
    "gepa_result": _(
        "No. score returned %(shape)s, as a gepa evaluator does; the contract wants a pair of the score and a side-info dict."
    ),
    "other": _("No. score returned %(shape)s, not a pair of a score and side info."),
}

REWARD_SPEC_PROBLEMS = {
    "spec_not_dict": _("REWARD_SPEC is a %(type)s, not a dict."),
    "weights_missing": _('REWARD_SPEC has no "weights".'),
    "section_not_dict": _("%(path)s is not a dict."),
    "weight_missing": _("%(path)s is missing; weights must have accuracy, speed and cost."),
    "weight_unknown": _("%(path)s is not a known weight; use accuracy, speed and cost."),
    "weight_not_number": _("%(path)s is not a number."),
    "weight_not_finite": _("%(path)s is not a finite number."),
    "weight_negative": _("%(path)s is negative; each weight must be 0 or more."),
    "weights_all_zero": _("All weights are 0; at least one must be more than 0."),
    "reference_missing": _("%(path)s is missing; it must be a positive number."),
    "reference_not_number": _("%(path)s is not a number."),
    "reference_not_finite": _("%(path)s is not a finite number."),
    "reference_not_positive": _("%(path)s must be a positive number."),
}

HINTS = {
    "feedback_empty": _(
        "The feedback is empty, so the reflection model has nothing to learn from."
    ),
    "feedback_too_short": _(
        "The feedback is only %(length)s characters long. Say what is wrong and what a correct output looks like."
    ),
    # Without an example (a result stored before examples came from the case itself).
    "feedback_generic": _(
        "The feedback is a generic word. Name what is wrong and what a correct output looks like."
    ),
    "feedback_same_for_different_scores": _(
        "Cases %(cases)s scored differently (%(scores)s) but got the same feedback."
    ),
    "feedback_restates_score": _(
        "The feedback only restates the score. The score says how good the output is; the feedback should say why."
    ),
    "feedback_not_actionable": _(
        "This case scored %(score)s, but its feedback says neither what is wrong nor what a correct output looks like."
    ),
    "score_out_of_range": _(
        "The score %(score)s is outside 0 to 1 and the metric has no REWARD_SPEC. Keep scores from 0 to 1 unless you mean otherwise."
    ),
    "bool_score": _(
        "The score is a bool. Python counts it as a number, but return 1.0 or 0.0 to say what you mean."
    ),
    "printed_output": _(
        "This case printed %(printed)s. What score prints is captured and stored for every case, and the optimizer never reads it: print only while debugging, and put what matters in the feedback."
    ),
    "feedback_specific": _(
        "Specific feedback: it names what is wrong or what a correct output looks like, which is what the optimizer learns from."
    ),
}

# feedback_generic with an example fix built from the case's own values
# (contract.hints.example_params), by params["example"].
GENERIC_EXAMPLES = {
    "mismatch": _(
        "The feedback is a generic word. Name what is wrong, for example: Expected %(expected)s, got %(output)s."
    ),
    "match": _(
        "The feedback is a generic word. Say what was checked, for example: Matches the expected %(expected)s."
    ),
    "output": _(
        "The feedback is a generic word. Name what is wrong with the output %(output)s and what a correct output looks like."
    ),
}

# Beside a case's printed output when it was cut.
OUTPUT_CUT = _("Cut: only the first %(kept)s of the %(printed)s printed are shown.")

# A one-line valid return for each return-value problem, after the docs' table of
# return values (Python, so the same in every language).
RETURN_EXAMPLES = {
    "not_a_pair": 'return 0.8, {"feedback": "Close. Missing the date."}',
    "score_not_number": 'return 0.8, {"feedback": "Close. Missing the date."}',
    "score_not_finite": "return 0.0, {\"feedback\": \"Expected 'bug', got 'other'.\"}",
    "side_info_not_dict": 'return 0.8, {"feedback": "Close."}',
    "feedback_missing": 'return 0.8, {"feedback": "Close. Missing the date."}',
    "feedback_not_string": 'return 0.8, {"feedback": "Close. Missing the date."}',
    "scores_not_dict": 'return 1.0, {"feedback": "OK", "scores": {"format": 1.0}}',
    "named_score_not_number": 'return 0.8, {"feedback": "OK", "scores": {"a": 0.9}}',
    "named_score_not_finite": 'return 0.8, {"feedback": "OK", "scores": {"a": 0.9}}',
    "predictor_feedback_not_dict": (
        'return 0.8, {"feedback": "Close.", "predictor_feedback": {"classify": "Name the date."}}'
    ),
    "predictor_name_not_string": (
        'return 0.8, {"feedback": "Close.", "predictor_feedback": {"classify": "Name the date."}}'
    ),
    "predictor_feedback_not_string": (
        'return 0.8, {"feedback": "Close.", "predictor_feedback": {"classify": "Name the date."}}'
    ),
    "predictor_feedback_empty": (
        'return 0.8, {"feedback": "Close.", "predictor_feedback": {"classify": "Name the date."}}'
    ),
}

# What good looks like, shown beside the hints (the docs' poor vs useful feedback).
HINT_ADVICE = _(
    "GEPA, DSPy GEPA and Auto read the feedback to write the next version. Say what is wrong and what a correct output looks like."
)

CASES_ERRORS = {
    "cases_too_large": _("The cases file is larger than %(limit)s bytes."),
    "bad_json": _("Line %(line)s is not valid JSON."),
    "not_object": _("Line %(line)s is not a JSON object."),
    "input_missing": _('Line %(line)s has no "input".'),
    "input_not_object": _('Line %(line)s: "input" must be a JSON object.'),
    "output_missing": _('Line %(line)s has no "output".'),
    "expected_not_object": _('Line %(line)s: "expected" must be a JSON object or null.'),
    "observation_not_object": _('Line %(line)s: "observation" must be a JSON object.'),
    "observation_value_not_number": _(
        'Line %(line)s: observation "%(key)s" must be a number of 0 or more, or null.'
    ),
    "wrong_count": ngettext_lazy(
        "The cases file has %(count)s case; the contract check needs %(expected)s.",
        "The cases file has %(count)s cases; the contract check needs %(expected)s.",
        "count",
    ),
}

# A submitted artifact that cannot be run at all (checked before any case starts).
ARTIFACT_ERRORS = {
    "artifact_kind_unknown": _("Unknown artifact kind %(kind)s."),
    "artifact_not_string": _("The artifact's %(field)s must be text."),
    "artifact_too_large": _("The artifact is %(size)s bytes; the limit is %(limit)s bytes."),
    "program_missing": _("A Python program artifact needs the program's source."),
    "program_not_utf8": _("program.py is not UTF-8 text."),
    "program_too_large": _("program.py is %(size)s bytes; the limit is %(limit)s bytes."),
    "program_syntax_error": PROBLEMS["program_syntax_error"],
    "template_syntax_error": PROBLEMS["template_syntax_error"],
    "template_field_not_plain": PROBLEMS["template_field_not_plain"],
}


def task_model_words(params: Mapping) -> str:
    """Why the task model did not answer: "could not be reached" for no connection or no
    answer in time, else the provider's error as a metric's llm() would word it."""
    named = bool(params.get("model"))
    if params.get("code") in ("unreachable", "timeout"):
        sentence = TASK_MODEL_UNREACHABLE if named else TASK_MODEL_UNREACHABLE_UNNAMED
        return fill(sentence, params)
    reason = model_error_words(params.get("code"), params)
    sentence = PROBLEMS["task_model_error"] if named else TASK_MODEL_UNNAMED
    return fill(sentence, {**params, "reason": reason})


def shape_words(shape: object) -> str:
    """What came back, in words: "a float (0.8)", "a dict with the keys score, feedback"."""
    if not isinstance(shape, Mapping) or shape.get("kind") not in SHAPES:
        return ""
    kind = shape["kind"]
    params = dict(shape)
    if kind in ("dict", "dspy_prediction"):
        keys = [str(key) for key in shape.get("keys") or []]
        params["keys"] = ", ".join(keys)
        if not keys:
            kind += "_empty"
    return fill(SHAPES[kind], params)


def not_a_pair_words(params: Mapping) -> str:
    """not_a_pair naming the shape that came back, where the result holds it."""
    shape = params.get("shape")
    named = shape_words(shape)
    if not named:
        return fill(PROBLEMS["not_a_pair"], params)
    kind = shape.get("kind")  # type: ignore[union-attr]
    return fill(NOT_A_PAIR.get(kind, NOT_A_PAIR["other"]), {"shape": named})


def check_problem_words(code: str | None, params: Mapping) -> str:
    """One sentence for a stage's or a case's problem."""
    if not code:
        return ""
    if code == "not_a_pair":
        return not_a_pair_words(params)
    if code == "framework_signature":
        table = FRAMEWORK_SIGNATURES
        return fill(table.get(params.get("framework"), table["dspy"]), params)
    if code == "no_score_function" and params.get("candidates"):
        first = params["candidates"][0]
        if isinstance(first, Mapping) and first.get("in_class"):
            return fill(NO_SCORE_IN_CLASS, first)
        if isinstance(first, Mapping) and first.get("framework") in NO_SCORE_BUT:
            return fill(NO_SCORE_BUT[first["framework"]], first)
    if code == "name_not_imported":
        kind = "import" if params.get("import") else params.get("framework") or "unknown"
        return fill(NAME_NOT_IMPORTED.get(kind, NAME_NOT_IMPORTED["unknown"]), params)
    if code == "syntax_error":
        return fill(SYNTAX_ERRORS.get(params.get("reason"), SYNTAX_ERRORS["syntax"]), params)
    if code == "bad_signature":
        return fill(
            BAD_SIGNATURES.get(params.get("reason"), BAD_SIGNATURES["not_inspectable"]), params
        )
    if code == "crashed":
        return fill(CRASHES.get(params.get("reason"), CRASHES["internal"]), params)
    if code == "sandbox_unavailable":
        return sandbox_unavailable_words(params.get("reason"), params)
    if code == "model_error":
        return model_error_words(params.get("code"), params)
    if code == "task_model_error":
        return task_model_words(params)
    if code in PROBLEMS:
        return fill(PROBLEMS[code], params)
    if code in REWARD_SPEC_PROBLEMS:
        return fill(REWARD_SPEC_PROBLEMS[code], params)
    return fill(UNKNOWN, {"code": code})


def stage_words(stage: Mapping) -> str:
    """What a stage says beside its status: its problem, or why it was skipped."""
    if stage.get("problem"):
        return check_problem_words(stage["problem"], stage.get("params") or {})
    reason = (stage.get("params") or {}).get("reason")
    if stage.get("status") == "skipped" and reason in SKIP_REASONS:
        return str(SKIP_REASONS[reason])
    return ""


def warning_words(warning: Mapping) -> str:
    """What a passed stage still says: a signature named like another framework's, or
    DSPy LMs of metric.py's own that the metric model answers instead."""
    params = warning.get("params") or {}
    table = FRAMEWORK_SIGNATURE_WARNINGS
    if warning.get("code") == "framework_signature":
        return fill(table.get(params.get("framework"), table["dspy"]), params)
    if warning.get("code") in LOAD_WARNINGS:
        return fill(LOAD_WARNINGS[warning["code"]], params)
    return fill(UNKNOWN, {"code": warning.get("code")})


def hint_words(code: str | None, params: Mapping) -> str:
    if code == "feedback_generic" and params.get("example") in GENERIC_EXAMPLES:
        return fill(GENERIC_EXAMPLES[params["example"]], params)
    if code == "printed_output":
        params = {**params, "printed": filesizeformat(params.get("printed") or 0)}
    return table_words(HINTS, code, params)


def output_cut_words(kept: int, printed: int) -> str:
    """The note beside printed output that was cut: `kept` of `printed` bytes shown."""
    return fill(OUTPUT_CUT, {"kept": filesizeformat(kept), "printed": filesizeformat(printed)})


def cases_error_words(code: str | None, params: Mapping) -> str:
    """Why a cases file was refused; `params["line"]` is its line, when there is one."""
    return table_words(CASES_ERRORS, code, {"line": None, **params})


# The one-click fix of missing imports: its button, and what it did.
ADD_IMPORTS = ngettext_lazy(
    "Add the %(count)s missing import", "Add the %(count)s missing imports", "count"
)
IMPORTS_ADDED = ngettext_lazy(
    "Added %(count)s import: %(lines)s.", "Added %(count)s imports: %(lines)s.", "count"
)
IMPORTS_NOTHING = _("Nothing to add: metric.py imports every name it uses.")
IMPORTS_LEFT = _("No import is known for %(names)s: define or import it yourself.")


def add_imports_label(count: int) -> str:
    return fill(ADD_IMPORTS, {"count": count})


def imports_added_words(added: list[str], left: list[str]) -> str:
    """What adding the missing imports did: the lines added, and the names still
    missing (nothing is known to import them)."""
    said = []
    if added:
        said.append(fill(IMPORTS_ADDED, {"count": len(added), "lines": "; ".join(added)}))
    if left:
        said.append(fill(IMPORTS_LEFT, {"names": ", ".join(left)}))
    return " ".join(said) or str(IMPORTS_NOTHING)


def fixable_imports(stage: Mapping) -> list[str]:
    """The import lines a failed load stage's missing names have (its `fix`, or those
    of its name_not_imported problems when the stage failed for another reason)."""
    if stage.get("id") != "load" or stage.get("status") != "failed":
        return []
    lines = [
        (problem.get("params") or {}).get("import")
        for problem in stage.get("problems") or []
        if problem.get("code") == "name_not_imported"
    ]
    return sorted({line for line in lines if line})


# What a failed metric.py looks like (contract.looks_like), and what Convert would do.
LOOKS_LIKE = {
    "dspy_metric": _("This file is a metric written for DSPy."),
    "gepa_evaluator": _("This file is an evaluator written for gepa."),
    "gepa_adapter": _(
        "This file is a gepa adapter: it scores inside its evaluate(), which the contract never calls. Write a score(input, output, expected) that scores one case as evaluate() does."
    ),
    "contract_return": _(
        "This file has the contract's score(input, output, expected), but it does not return the contract's pair."
    ),
}
CONVERT_OFFERS = {
    "contract_return": _(
        'Convert to the contract rewrites its returns as (score, {"feedback": ...}).'
    ),
    "other": _(
        'Convert to the contract rewrites it as score(input, output, expected) returning (score, {"feedback": ...}).'
    ),
}


def looks_like_words(found: Mapping | None) -> str:
    """What the file looks like and, when Convert would change it, what Convert does."""
    if not found or found.get("kind") not in LOOKS_LIKE:
        return ""
    said = str(LOOKS_LIKE[found["kind"]])
    if found.get("convertible"):
        offer = CONVERT_OFFERS.get(found["kind"], CONVERT_OFFERS["other"])
        said = f"{said} {offer}"
    return said
