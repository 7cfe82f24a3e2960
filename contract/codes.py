"""Every identifier the engine emits, for a translation layer to cover.

The engine never produces prose: stages, statuses, problems, reasons and
hints are these codes plus parameters. A model_error also passes on the codes of the
model call that failed, which the models layer (providers/) lists; wording.codes adds
them, and a test elsewhere asserts that each code there has a message.
"""

from __future__ import annotations

from contract.artifacts import ARTIFACT_ERRORS, RUN_PROBLEMS, RUN_STATUSES
from sandbox.errors import REASONS as SANDBOX_UNAVAILABLE_REASONS
from skynet import rewardspec, signature
from skynet.returns import PROBLEMS as RETURN_VALUE_PROBLEMS

LOOKS_LIKE_KINDS = ("dspy_metric", "gepa_evaluator", "gepa_adapter", "contract_return")
NAME_NOT_IMPORTED_KINDS = ("import", "gepa", "unknown")

STAGES = ("load", "signature", "reward_spec", "call", "return_value")
STAGE_STATUSES = ("passed", "failed", "skipped", "pending", "running")
CASE_STATUSES = ("valid", "invalid", "error", "timeout", "pending", "skipped")

# A child that timed out or died can do so while loading, hence in "load" too.
LOAD_PROBLEMS = (
    "not_utf8",
    "file_too_large",
    "syntax_error",
    "import_error",
    # import_error of a module the sandbox does not have (sandbox.libraries): one outside
    # the documented set, or one of the set that this worker could not stage.
    "module_not_available",
    "library_unavailable",
    # numpy (or a library that needs it) in a process whose address space cannot hold it.
    "library_needs_memory",
    # import_error of the metric's own module that is not among its helper files
    # (contract.local_modules): params module, line.
    "local_module_missing",
    "no_score_function",
    # Names metric.py uses but never imports (contract.missing_imports), found before
    # anything runs: one name_not_imported per name, under the stage's summary.
    "names_not_imported",
    "name_not_imported",
    "timeout",
    "crashed",
    # The user stopped the check (contract.cancel).
    "cancelled",
    # No check can run on this worker (sandbox.SandboxUnavailable).
    "sandbox_unavailable",
)
SYNTAX_ERROR_REASONS = ("syntax", "null_bytes", "too_complex")
# What a load stage that passed still says: metric.py sets DSPy LMs of its own, which the
# metric model answers instead (skynet._dspy_metric; params: models, count).
LOAD_WARNINGS = ("dspy_lm_replaced",)
# framework_signature: a DSPy metric's or gepa evaluator's parameters (contract.frameworks).
SIGNATURE_PROBLEMS = ("bad_signature", "framework_signature")
SIGNATURE_REASONS = signature.REASONS
REWARD_SPEC_PROBLEMS = ("invalid_reward_spec",)
REWARD_SPEC_CODES = rewardspec.CODES
# Stage-level summaries of per-case failures.
# task_model_error: every case that failed did so because the task model's call in the
# artifact's run failed (params: model, code, message, cases, count).
CALL_PROBLEMS = ("cases_failed", "cancelled", "task_model_error")
RETURN_STAGE_PROBLEMS = ("cases_invalid",)
# What a case row can carry when its child errored. Load-phase codes appear
# when a later child fails to load what the first one loaded (non-determinism).
CASE_ERROR_PROBLEMS = (
    "exception",
    "model_error",
    "crashed",
    "timeout",
    "cancelled",
    "import_error",
    "module_not_available",
    "library_unavailable",
    "library_needs_memory",
    "local_module_missing",
    "syntax_error",
    "no_score_function",
    "bad_signature",
    "framework_signature",
    "invalid_reward_spec",
    # The artifact's run (contract.artifacts), before score(): run_error,
    # run_model_error, program_syntax_error, program_import_error,
    # no_run_function and the template codes.
    *RUN_PROBLEMS,
)
CRASH_REASONS = ("exited", "signal", "no_result", "protocol", "confine_failed", "internal")
# Why a stage was skipped although nothing before it failed.
# run_failed: with an artifact, no case's run got as far as loading metric.py.
SKIP_REASONS = ("not_defined", "not_static", "run_failed")
# Codes the default model handler and skynet.llm() use in model_error, the model's state
# and the check's budget; a provider call's own codes come on top (wording.codes).
MODEL_ERROR_CODES = (
    "no_metric_model",
    "handler_error",
    "reply_too_large",
    "no_channel",
    "request_too_large",
    "channel_closed",
    "protocol",
    "unknown_model",
    "not_configured",
    # The artifact's llm() calls when no task model is configured.
    "no_task_model",
    "budget_exceeded",
)
# A run_model_error with any other of these codes is the check's doing (its budget, its
# channel, its handler), not the task model's: it is not blamed on the model.
CHECK_SIDE_MODEL_ERRORS = tuple(
    code
    for code in MODEL_ERROR_CODES
    if code not in ("no_metric_model", "unknown_model", "not_configured")
)

HINTS = (
    "feedback_empty",
    "feedback_too_short",
    "feedback_generic",
    "feedback_same_for_different_scores",
    "feedback_restates_score",
    "feedback_not_actionable",
    "score_out_of_range",
    "bool_score",
    "printed_output",
    # A positive note, not advice: shown apart from the hints.
    "feedback_specific",
)
# The hints that confirm what is good rather than advise a change.
NOTES = ("feedback_specific",)

CASES_ERRORS = (
    "cases_too_large",
    "bad_json",
    "not_object",
    "input_missing",
    "input_not_object",
    "output_missing",
    "expected_not_object",
    "observation_not_object",
    "observation_value_not_number",
    "wrong_count",
)

PROBLEMS = tuple(
    dict.fromkeys(
        LOAD_PROBLEMS
        + SIGNATURE_PROBLEMS
        + REWARD_SPEC_PROBLEMS
        + CALL_PROBLEMS
        + RETURN_STAGE_PROBLEMS
        + CASE_ERROR_PROBLEMS
        + RETURN_VALUE_PROBLEMS
    )
)


def all_codes() -> dict[str, tuple[str, ...]]:
    """Every code family by name, for completeness checks of translations."""
    return {
        "stages": STAGES,
        "stage_statuses": STAGE_STATUSES,
        "case_statuses": CASE_STATUSES,
        "problems": PROBLEMS,
        "load_warnings": LOAD_WARNINGS,
        "syntax_error_reasons": SYNTAX_ERROR_REASONS,
        "signature_reasons": SIGNATURE_REASONS,
        "reward_spec_codes": REWARD_SPEC_CODES,
        "crash_reasons": CRASH_REASONS,
        "sandbox_unavailable_reasons": SANDBOX_UNAVAILABLE_REASONS,
        "skip_reasons": SKIP_REASONS,
        "model_error_codes": MODEL_ERROR_CODES,
        "hints": HINTS,
        "cases_errors": CASES_ERRORS,
        # An artifact the check refuses before running anything (ArtifactError).
        "artifact_errors": ARTIFACT_ERRORS,
        # CaseResult.run["status"].
        "run_statuses": RUN_STATUSES,
        # What a failed metric.py looks like (CheckResult.looks_like["kind"]).
        "looks_like": LOOKS_LIKE_KINDS,
        # How a name_not_imported is worded: with its import line, gepa's, or unknown.
        "name_not_imported": NAME_NOT_IMPORTED_KINDS,
    }
