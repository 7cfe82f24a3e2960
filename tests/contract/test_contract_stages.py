"""Every stage and problem code through run_check, one inline metric.py each."""

from __future__ import annotations

import pytest

from contract.engine import run_check, validate_timeout
from sandbox.libraries import AVAILABLE

OK = 'def score(input, output):\n    return 1.0, {"feedback": "Matches the label."}\n'


def stage_statuses(result):
    return [s.status for s in result.stages]


# -- load --------------------------------------------------------------------------


def test_not_utf8(check):
    result = check(b"x = 1\n'\xe9'\n")
    load = result.stage("load")
    assert (load.problem, load.params) == ("not_utf8", {"byte": 7, "line": 2, "column": 2})
    assert stage_statuses(result) == ["failed", "skipped", "skipped", "skipped", "skipped"]
    assert [c.status for c in result.cases] == ["skipped"] * 3


def test_file_too_large(check):
    result = check(OK + "#" * 262144)
    load = result.stage("load")
    assert load.problem == "file_too_large"
    assert load.params == {"size": len(OK) + 262144, "limit": 262144}


def test_exactly_256_kb_is_accepted(check):
    source = OK + "#" * (262144 - len(OK) - 1) + "\n"
    assert len(source.encode()) == 262144
    assert check(source, one=True).passed


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def score(input, output)\n    return 1\n", "syntax"),
        ("x = 1\x00\n", "null_bytes"),
        ("x = " + "-" * 200000 + "1\n", "too_complex"),
    ],
)
def test_syntax_error(check, source, reason):
    result = check(source)
    load = result.stage("load")
    assert (load.problem, load.params["reason"]) == ("syntax_error", reason)
    assert {"line", "column", "msg"} <= set(load.params)


def test_compile_time_error_found_in_the_child(check):
    result = check("return 1\ndef score(input, output):\n    return 1, {}\n")
    load = result.stage("load")
    assert (load.problem, load.params["line"]) == ("syntax_error", 1)


def test_import_error_with_metric_line_numbers(check):
    result = check(
        """
        import json

        def helper():
            return {}["missing"]

        VALUE = helper()
        """
    )
    load = result.stage("load")
    assert load.problem == "import_error"
    assert (load.params["type"], load.params["message"]) == ("KeyError", "'missing'")
    assert load.params["traceback"] == [
        {"line": 6, "function": "<module>", "text": "VALUE = helper()"},
        {"line": 4, "function": "helper", "text": 'return {}["missing"]'},
    ]


def test_import_of_a_module_the_sandbox_does_not_have_names_it_and_the_set(check):
    load = check("import torch\n").stage("load")
    assert (load.problem, load.params["type"]) == ("module_not_available", "ModuleNotFoundError")
    assert load.params["module"] == "torch"
    assert load.params["available"] == list(AVAILABLE)


def test_import_of_a_module_no_library_has_is_the_metrics_own_missing_file(check):
    load = check("import no_such_module_here\n").stage("load")
    assert (load.problem, load.params["type"]) == ("local_module_missing", "ModuleNotFoundError")
    assert (load.params["module"], load.params["line"]) == ("no_such_module_here", 1)
    assert "available" not in load.params


def test_a_missing_name_of_a_module_that_is_there_is_import_error(check):
    load = check("from json import no_such_name\n").stage("load")
    assert (load.problem, load.params["type"]) == ("import_error", "ImportError")
    assert "module" not in load.params


def test_system_exit_at_import_is_import_error(check):
    load = check("import sys\nsys.exit(3)\n").stage("load")
    assert (load.problem, load.params["type"]) == ("import_error", "SystemExit")


def test_no_score_function(check):
    assert check("def scorer(input, output):\n    pass\n").stage("load").problem == (
        "no_score_function"
    )


def test_score_that_is_not_callable(check):
    load = check("score = 0.5\n").stage("load")
    assert (load.problem, load.params) == ("no_score_function", {"type": "float"})


def test_crash_while_loading_fails_load(check):
    result = check("import os\nprint('bye', flush=True)\nos._exit(4)\n")
    load = result.stage("load")
    assert (load.problem, load.params["exit_code"]) == ("crashed", 4)
    assert result.cases[0].stdout == "bye\n"


def test_timeout_while_loading_fails_load(check):
    result = check("while True:\n    pass\n", timeout_s=1)
    load = result.stage("load")
    assert (load.problem, load.params) == ("timeout", {"seconds": 1.0})


# -- signature ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "reason", "names"),
    [
        ("input", "too_few_parameters", ["input"]),
        ("", "too_few_parameters", []),
        ("input, output, expected, extra", "too_many_required", ["extra"]),
        ("input, output, *, strict", "required_keyword_only", ["strict"]),
    ],
)
def test_bad_signature(check, params, reason, names):
    result = check(f"def score({params}):\n    return 1, {{}}\n")
    sig = result.stage("signature")
    assert (sig.problem, sig.params["reason"], sig.params["names"]) == (
        "bad_signature",
        reason,
        names,
    )
    assert result.failed_stage == "signature"
    assert result.stage("call").status == "skipped"


@pytest.mark.parametrize(
    ("params", "call_args"),
    [
        ("input, output", 2),
        ("input, output, expected", 3),
        ("input, output, expected=None, extra=1, *, flag=False, **kw", 3),
        ("*args", 3),
        ("input, *rest", 3),
        ("input, output, /", 2),
    ],
)
def test_accepted_signatures_and_argument_count(check, params, call_args):
    source = f"def score({params}):\n    return 1.0, {{'feedback': 'Matches the label.'}}\n"
    result = check(source, one=True)
    assert result.passed, result.to_dict()
    assert result.cases[0].call_args == call_args


def test_two_argument_score_is_called_without_expected(check):
    result = check(
        """
        def score(*args):
            return float(len(args)), {"feedback": repr(args[2])}
        """,
        one=True,
    )
    assert (result.cases[0].score, result.cases[0].feedback) == (3.0, "{'label': 'bug'}")


# -- reward_spec -------------------------------------------------------------------


def test_reward_spec_problems_are_all_reported(check):
    result = check(
        """
        REWARD_SPEC = {"weights": {"accuracy": 1, "speed": -1}, "speed": {"reference": 0}}
        def score(input, output):
            return 1.0, {"feedback": "x"}
        """
    )
    spec = result.stage("reward_spec")
    assert (spec.problem, spec.params) == ("invalid_reward_spec", {"count": 4})
    assert [p["code"] for p in spec.problems] == [
        "weight_negative",
        "weight_missing",
        "reference_not_positive",
        "reference_missing",
    ]
    assert result.failed_stage == "reward_spec"


def test_reward_spec_not_dict(check):
    spec = check("REWARD_SPEC = 3\n" + OK).stage("reward_spec")
    assert spec.problems == [{"code": "spec_not_dict", "params": {"path": "", "type": "int"}}]


def test_no_reward_spec_skips_the_stage_with_a_reason(check):
    spec = check(OK, one=True).stage("reward_spec")
    assert (spec.status, spec.params) == ("skipped", {"reason": "not_defined"})


# -- call --------------------------------------------------------------------------


def test_exception_in_score(check):
    result = check(
        """
        def score(input, output, expected):
            label = expected["label"]
            return 1 / 0, {"feedback": label}
        """
    )
    assert (result.failed_stage, result.stage("call").problem) == ("call", "cases_failed")
    assert result.stage("call").params == {"cases": [0, 1, 2], "count": 3}
    assert result.stage("return_value").status == "skipped"
    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "exception")
    assert case.params == {"type": "ZeroDivisionError", "message": "division by zero"}
    assert case.traceback == [
        {"line": 3, "function": "score", "text": 'return 1 / 0, {"feedback": label}'}
    ]
    assert case.exception["type"] == "ZeroDivisionError"


def test_one_failing_case_still_runs_every_case(check):
    result = check(
        """
        def score(input, output, expected):
            if output == "other":
                raise ValueError("no")
            return 1.0, {"feedback": "Matches the expected label."}
        """
    )
    assert [c.status for c in result.cases] == ["valid", "error", "valid"]
    assert result.stage("call").params == {"cases": [1], "count": 1}


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("import sys; sys.exit(0)", "SystemExit"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise GeneratorExit", "GeneratorExit"),
    ],
)
def test_base_exceptions_are_exceptions(check, body, kind):
    case = check(f"def score(input, output):\n    {body}\n", one=True).cases[0]
    assert (case.status, case.problem, case.params["type"]) == ("error", "exception", kind)


def test_os_exit_zero_in_score_is_a_crash_not_a_pass(check):
    result = check("import os\ndef score(input, output):\n    os._exit(0)\n", one=True)
    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "crashed")
    assert case.params == {"reason": "exited", "exit_code": 0, "signal": None, "signal_name": None}
    assert result.passed is False


def test_killed_by_a_signal_is_a_crash(check):
    result = check(
        "import os, signal\ndef score(input, output):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
        one=True,
    )
    case = result.cases[0]
    assert (case.problem, case.params["reason"], case.params["signal"]) == ("crashed", "signal", 9)
    assert case.params["signal_name"] == "SIGKILL"


def test_model_error_without_a_metric_model(check):
    case = check(
        """
        import skynet
        def score(input, output):
            return 1.0, {"feedback": skynet.llm("Grade this", {"output": output})}
        """,
        one=True,
    ).cases[0]
    assert (case.status, case.problem) == ("error", "model_error")
    assert case.params == {"code": "no_metric_model", "message": ""}
    assert case.traceback[-1]["line"] == 3


def test_caught_model_error_is_fine(check):
    result = check(
        """
        import skynet
        def score(input, output):
            try:
                skynet.llm("x")
            except skynet.ModelError as exc:
                return 0.5, {"feedback": "Model said: " + exc.code}
        """,
        one=True,
    )
    assert result.passed and result.cases[0].feedback == "Model said: no_metric_model"


def test_timeout_in_score(check):
    result = check(
        "def score(input, output):\n    while True:\n        pass\n", one=True, timeout_s=1
    )
    case = result.cases[0]
    assert (case.status, case.problem, case.params) == ("timeout", "timeout", {"seconds": 1.0})
    assert result.failed_stage == "call"


# -- return_value ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem", "params"),
    [
        ("float('nan'), {'feedback': 'x'}", "score_not_finite", {}),
        ("1.0, {'feedback': 3}", "feedback_not_string", {"type": "int"}),
        ("1.0, {'feedback': 'x', 'scores': 1}", "scores_not_dict", {"type": "int"}),
        (
            "1.0, {'feedback': 'x', 'scores': {'f': float('inf')}}",
            "named_score_not_finite",
            {"name": "f"},
        ),
    ],
)
def test_return_value_problems(check, value, problem, params):
    result = check(f"def score(input, output):\n    return {value}\n", one=True)
    case = result.cases[0]
    own = {key: item for key, item in case.params.items() if key not in ("shape", "fix")}
    assert (case.status, case.problem, own) == ("invalid", problem, params)
    # Every invalid return names what came back and the return that keeps the contract.
    assert case.params["shape"] == {"kind": "tuple", "count": 2}
    assert case.params["fix"].startswith("return ")
    assert case.repr


def test_valid_case_row(check):
    result = check(
        """
        def score(input, output):
            print("looking at", output)
            return 0.25, {"feedback": "Expected bug.", "scores": {"label": 0, "tone": True}}
        """,
        one=True,
    )
    case = result.cases[0]
    assert case.status == "valid" and case.score == 0.25
    assert (case.feedback, case.feedback_length) == ("Expected bug.", 13)
    assert case.scores == {"label": 0.0, "tone": 1.0}
    assert case.stdout == "looking at other\n"
    assert case.duration_ms >= 0 and case.parent_duration_ms >= case.duration_ms
    assert case.call_args == 2


# -- API ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, 0.5, 601, float("nan"), True, "60"])
def test_timeout_is_validated(bad):
    with pytest.raises(ValueError):
        validate_timeout(bad)
    with pytest.raises(ValueError):
        run_check(OK, timeout_s=bad)


def test_progress_is_reported_stage_by_stage(check):
    seen = []
    result = check(OK, on_progress=lambda r: seen.append(r.to_dict()))
    assert seen[0]["stages"][0]["status"] == "running"
    assert any(s["stages"][3]["status"] == "running" for s in seen)
    assert [c["status"] for c in seen[-2]["cases"]] == ["valid"] * 3
    assert seen[-1] == result.to_dict() and result.passed


def test_traceback_lines_survive_form_feeds(check):
    case = check("x = 1\n\fdef score(i, o):\n    raise ValueError('x')\n", one=True).cases[0]
    assert case.traceback == [{"line": 3, "function": "score", "text": "raise ValueError('x')"}]


def test_a_later_child_that_fails_to_load_is_an_error_row():
    from contract.engine import fill_case
    from contract.results import CaseResult
    from contract.runner import ChildOutcome

    frame = [{"line": 1, "function": "<module>", "text": "import random"}]
    params = {"type": "ValueError", "message": "m", "omitted_frames": 0, "traceback": frame}
    skipped = {"status": "skipped", "problem": None, "params": {}, "problems": []}
    loaded = {
        "stages": {
            "load": {
                "status": "failed",
                "problem": "import_error",
                "params": params,
                "problems": [],
            },
            "signature": skipped,
            "reward_spec": skipped,
        },
        "call_args": None,
    }
    row = CaseResult(index=2)
    fill_case(row, ChildOutcome(loaded=loaded, stdout="hi"))
    assert (row.status, row.problem, row.traceback, row.stdout) == (
        "error",
        "import_error",
        frame,
        "hi",
    )
    assert "traceback" not in row.params
