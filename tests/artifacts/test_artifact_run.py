"""A check that runs the user's python program on each case's input before score():
its output, its failures, its time limit, where its llm() calls go, and the parent's
measurements of it that score() sees."""

from __future__ import annotations

import json
import time

import pytest

from contract import codes
from contract.artifacts import Artifact, ArtifactError
from contract.cases import DEFAULT_CASES, Case
from contract.engine import run_check
from tests.artifacts.conftest import EXACT_MATCH, LABELLER, CountingHandler, dedent
from tests.contract.conftest import _children_of

ONE = [DEFAULT_CASES[0]]  # "I was charged twice...", expected billing


@pytest.fixture
def no_stray_children():
    import os

    before = set(_children_of(os.getpid()))
    yield
    assert sorted(set(_children_of(os.getpid())) - before) == []


def test_program_output_is_scored_by_the_exact_match_metric(check, no_stray_children):
    result = check(EXACT_MATCH, LABELLER)

    assert result.passed is True, result.to_dict()
    assert [c.score for c in result.cases] == [1.0, 1.0, 1.0]
    for case, label in zip(result.cases, ["billing", "bug", "account"], strict=True):
        assert case.status == "valid"
        assert case.run["status"] == "ok"
        assert case.run["output_repr"] == repr(label)
        assert case.run["problem"] is None and case.run["traceback"] == []
        assert case.run["duration_ms"] >= 0
        # The parent's measurement, not the case's recorded 850 / 1200 / 640 ms.
        assert case.observation["duration_ms"] == case.run["duration_ms"]
        assert case.observation["model_calls"] == 0
    assert [s.status for s in result.stages] == ["passed", "passed", "skipped", "passed", "passed"]


def test_without_an_artifact_the_given_output_is_scored_as_before(check):
    result = run_check(dedent(EXACT_MATCH), timeout_s=10)
    assert [c.score for c in result.cases] == [1.0, 0.0, 1.0]
    assert all(c.run is None for c in result.cases)
    assert result.cases[0].observation["duration_ms"] == 850.0


def test_the_artifact_content_is_passed_first_and_output_need_not_be_json(check):
    result = check(
        """
        def score(input, output, expected):
            content, seen, kind = output.content, output.question, type(output).__name__
            return 1.0, {"feedback": f"{kind}: {content} / {seen}"}
        """,
        Artifact.python(
            dedent(
                """
                class Answer:
                    def __init__(self, content, question):
                        self.content, self.question = content, question

                def run(artifact, input):
                    return Answer(artifact, input["question"][:7])
                """
            ),
            content="Be brief.",
        ),
        cases=ONE,
    )
    case = result.cases[0]
    assert case.feedback == "Answer: Be brief. / I was c"
    assert case.run["output_repr"].startswith("<program.Answer object at")


def test_run_cannot_change_the_input_score_sees(check):
    result = check(
        """
        def score(input, output, expected):
            return 1.0, {"feedback": f"{sorted(input)} {output}"}
        """,
        """
        def run(artifact, input):
            input["injected"] = True
            return len(input)
        """,
        cases=ONE,
    )
    assert result.cases[0].feedback == "['question'] 2"


def test_run_that_raises_is_a_run_error_in_program_lines(check, no_stray_children):
    result = check(
        EXACT_MATCH,
        """
        import skynet

        def helper(question):
            return {"a": 1}[question]

        def run(artifact, input):
            print("looking up")
            return helper(input["question"])
        """,
        cases=ONE,
    )
    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "run_error")
    assert case.params == {"type": "KeyError", "message": repr(DEFAULT_CASES[0].input["question"])}
    expected_traceback = [
        {"line": 8, "function": "run", "text": 'return helper(input["question"])'},
        {"line": 4, "function": "helper", "text": 'return {"a": 1}[question]'},
    ]
    assert case.traceback == expected_traceback
    assert case.exception["type"] == "KeyError"
    assert case.run["status"] == "error" and case.run["traceback"] == expected_traceback
    assert case.run["output_repr"] is None
    assert case.stdout == "looking up\n"
    # metric.py was still loaded and its stages reported; score() was not called.
    assert [s.status for s in result.stages[:3]] == ["passed", "passed", "skipped"]
    assert (result.failed_stage, result.stage("call").problem) == ("call", "cases_failed")
    assert case.score is None and case.call_args == 3


def test_program_that_fails_on_import_or_has_no_run(check):
    case = check(EXACT_MATCH, "x = 1\n\nraise RuntimeError('no config')\n", cases=ONE).cases[0]
    assert (case.problem, case.params) == (
        "program_import_error",
        {"type": "RuntimeError", "message": "no config"},
    )
    assert case.traceback == [
        {"line": 3, "function": "<module>", "text": "raise RuntimeError('no config')"}
    ]
    assert case.run["duration_ms"] is None  # run() never started
    case = check(EXACT_MATCH, "def main(artifact, input):\n    return 1\n", cases=ONE).cases[0]
    assert (case.status, case.problem) == ("error", "no_run_function")
    case = check(EXACT_MATCH, "run = 3\n", cases=ONE).cases[0]
    assert (case.problem, case.params) == ("no_run_function", {"type": "int"})


@pytest.mark.parametrize(
    ("artifact", "code"),
    [
        (Artifact.python("def run(a, i)\n    return 1\n"), "program_syntax_error"),
        (Artifact.python(b"\xff\xfe"), "program_not_utf8"),
        (Artifact.python("x = 1\n" * 60_000), "program_too_large"),
        (Artifact("python"), "program_missing"),
        (Artifact("python", "def run(a, i):\n    return 1\n", 3), "artifact_not_string"),  # type: ignore[arg-type]
        (Artifact("shell", "ls"), "artifact_kind_unknown"),
        (Artifact.prompt("x" * 300_000), "artifact_too_large"),
    ],
)
def test_artifacts_that_cannot_run_are_refused_before_any_child(artifact, code):
    with pytest.raises(ArtifactError) as info:
        run_check(dedent(EXACT_MATCH), timeout_s=10, artifact=artifact)
    assert info.value.code == code
    assert code in codes.all_codes()["artifact_errors"]
    if code == "program_syntax_error":
        assert info.value.params["line"] == 1


def test_run_looping_forever_times_out(check, no_stray_children):
    started = time.monotonic()
    result = check(
        EXACT_MATCH,
        "def run(artifact, input):\n    while True:\n        pass\n",
        cases=ONE,
        timeout_s=1,
    )
    case = result.cases[0]
    assert (case.status, case.problem, case.params) == ("timeout", "timeout", {"seconds": 1.0})
    assert case.run["status"] == "timeout" and case.run["problem"] == "timeout"
    assert case.run["duration_ms"] >= 1000
    assert time.monotonic() - started < 6
    # No child got to load metric.py: its stages are skipped, the call stage fails.
    assert [s.status for s in result.stages[:3]] == ["skipped"] * 3
    assert result.stage("load").params == {"reason": "run_failed"}
    assert (result.passed, result.failed_stage) == (False, "call")


def test_run_and_score_each_get_the_time_limit(check):
    # Run 0.6 s plus score 0.6 s is more than the 1 s limit, but each is within it.
    result = check(
        """
        import time
        def score(input, output, expected):
            time.sleep(0.6)
            return 1.0, {"feedback": "Slow but fine."}
        """,
        "import time\n\ndef run(artifact, input):\n    time.sleep(0.6)\n    return 'billing'\n",
        cases=ONE,
        timeout_s=1,
    )
    assert result.passed is True, result.to_dict()


def test_a_timed_out_first_case_lets_the_next_one_decide_the_load_stages(check):
    result = check(
        EXACT_MATCH,
        """
        def run(artifact, input):
            while "charged" in input["question"]:
                pass
            return "bug"
        """,
        cases=list(DEFAULT_CASES[:2]),
        timeout_s=1,
    )
    first, second = result.cases
    assert first.status == "timeout"
    assert (second.status, second.score) == ("valid", 1.0)
    assert [s.status for s in result.stages[:3]] == ["passed", "passed", "skipped"]
    assert result.failed_stage == "call"


def test_llm_calls_go_to_the_model_of_their_phase_and_usage_is_split(check):
    task = CountingHandler(lambda r: "billing", input_tokens=100, output_tokens=10, cost_usd=0.002)
    judge = CountingHandler("PASS", input_tokens=50, output_tokens=5, cost_usd=0.0005)
    result = check(
        """
        from skynet import llm
        def score(input, output, expected):
            verdict = llm("Judge this label.", {"label": output})
            return (1.0 if verdict == "PASS" else 0.0), {"feedback": f"Judge said {verdict}."}
        """,
        """
        from skynet import llm
        def run(artifact, input):
            first = llm(artifact, input)
            return llm("Repeat: " + first)
        """,
        cases=ONE,
        task_llm_for_case=lambda i: task,
        llm_for_case=lambda i: judge,
    )
    case = result.cases[0]
    assert result.passed, result.to_dict()
    assert [r["instructions"] for r in task.requests] == ["", "Repeat: billing"]
    assert task.requests[0]["input"] == DEFAULT_CASES[0].input
    assert judge.requests == [{"instructions": "Judge this label.", "input": {"label": "billing"}}]
    assert case.run["usage"] == {
        "model_calls": 2,
        "input_tokens": 200,
        "output_tokens": 20,
        "cost_usd": 0.004,
        "model_ms": 2.0,
    }
    assert case.usage == {
        "model_calls": 1,
        "input_tokens": 50,
        "output_tokens": 5,
        "cost_usd": 0.0005,
        "model_ms": 1.0,
    }
    assert case.observation["model_calls"] == 2
    assert case.observation["cost_usd"] == 0.004
    assert (case.observation["input_tokens"], case.observation["output_tokens"]) == (200, 20)


def test_one_handler_for_both_models_is_still_split_by_phase(check):
    both = CountingHandler("billing", cost_usd=0.001)
    result = check(
        """
        from skynet import llm
        def score(input, output, expected):
            llm("judge 1"); llm("judge 2"); llm("judge 3")
            return 1.0, {"feedback": "Judged three times."}
        """,
        "from skynet import llm\n\ndef run(artifact, input):\n    return llm('label')\n",
        cases=ONE,
        task_llm_for_case=lambda i: both,
        llm_for_case=lambda i: both,
    )
    case = result.cases[0]
    assert case.run["usage"]["model_calls"] == 1 and case.run["usage"]["cost_usd"] == 0.001
    assert case.usage["model_calls"] == 3 and case.usage["cost_usd"] == 0.003


def test_without_a_task_model_the_run_gets_a_model_error(check):
    result = check(
        EXACT_MATCH,
        "from skynet import llm\n\ndef run(artifact, input):\n    return llm('label')\n",
        cases=ONE,
    )
    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "run_model_error")
    assert case.params == {"code": "no_task_model", "message": ""}
    assert case.traceback == [{"line": 4, "function": "run", "text": "return llm('label')"}]
    # Counted by the parent even though the handler does not count usage.
    assert case.observation["model_calls"] == 1 and case.observation["cost_usd"] is None


OBSERVING_METRIC = """
import json
import skynet
from skynet import _state

def score(input, output, expected):
    seen = dict(skynet.observation())
    cost = skynet.service_cost()
    # Tampering: what the check reports comes from the parent's copy.
    _state.install(None, {"duration_ms": 1, "cost_usd": 0, "model_calls": 0})
    return 1.0, {"feedback": json.dumps({"seen": seen, "cost": cost})}
"""


def test_score_sees_the_parents_measurements_and_cannot_change_them(check):
    task = CountingHandler("billing", input_tokens=1000, output_tokens=500, cost_usd=0.006)
    result = check(
        OBSERVING_METRIC,
        """
        import time
        import skynet
        from skynet import _state, llm

        def run(artifact, input):
            before = dict(skynet.observation())
            # Neither the program's own clock nor a forged observation is reported.
            _state.install(_state.channel(), {"duration_ms": 0.5, "cost_usd": 0})
            time.sleep(0.3)
            llm("label it")
            return before
        """,
        cases=[Case({"q": 1}, "given output", None, {"duration_ms": 5, "cost_usd": 9.0})],
        task_llm_for_case=lambda i: task,
    )
    case = result.cases[0]
    seen = json.loads(case.feedback)
    # The program saw nothing measured yet: the case's recorded observation is not used.
    assert "'duration_ms': None" in case.run["output_repr"]
    assert "'cost_usd': None" in case.run["output_repr"]
    assert seen["seen"] == case.observation
    assert seen["cost"] == 0.006
    assert case.observation["duration_ms"] > 300
    assert case.observation["duration_ms"] == case.run["duration_ms"]
    assert case.observation == {
        "duration_ms": case.run["duration_ms"],
        "cost_usd": 0.006,
        "model_calls": 1,
        "input_tokens": 1000,
        "output_tokens": 500,
    }


REWARD_METRIC = """
import skynet

REWARD_SPEC = {
    "weights": {"accuracy": 0.5, "speed": 0.25, "cost": 0.25},
    "speed": {"reference": 100},
    "cost": {"reference": 0.001},
}

def score(input, output, expected):
    right = output == expected["label"]
    feedback = "Correct." if right else f"Expected {expected['label']!r}, got {output!r}."
    return skynet.reward(REWARD_SPEC, 1.0 if right else 0.0, feedback)
"""


def test_reward_sees_the_real_speed_and_cost_of_the_run(check):
    task = CountingHandler("billing", cost_usd=0.004)
    result = check(
        REWARD_METRIC,
        """
        import time
        from skynet import llm

        def run(artifact, input):
            time.sleep(0.4)
            return llm("label: " + input["question"])
        """,
        cases=ONE,
        task_llm_for_case=lambda i: task,
    )
    case = result.cases[0]
    assert result.passed, result.to_dict()
    assert result.stage("reward_spec").status == "passed"
    duration = case.run["duration_ms"]
    assert duration > 400
    assert case.scores == {
        "accuracy": 1.0,
        "speed": pytest.approx(100 / duration),
        "cost": pytest.approx(0.25),
    }
    assert case.score == pytest.approx(0.5 + 0.25 * 100 / duration + 0.25 * 0.25)
    assert "not measured" not in case.feedback


def test_a_forged_run_frame_is_a_crash_of_the_run_only(check):
    result = check(
        EXACT_MATCH,
        """
        import json, os, sys

        def run(artifact, input):
            body = json.dumps({"type": "run_finished", "outcome": "returned", "output_repr": "x"})
            os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body.encode())
            return "billing"
        """,
        cases=ONE,
    )
    # A run_finished without an output is malformed: the run child crashed (protocol).
    # The metric runs in a process of its own, which the run never reached.
    case = result.cases[0]
    assert (case.status, case.problem, case.params["reason"]) == ("error", "crashed", "protocol")
    assert case.run["status"] == "error" and case.run["problem"] == "crashed"
    assert result.stage("load").params == {"reason": "run_failed"}


def test_a_well_formed_forged_run_frame_cannot_change_the_measurements(check):
    """The program may describe its own output (it chooses that anyway), not its time."""
    result = check(
        """
        import skynet
        def score(input, output, expected):
            seen = skynet.observation()["duration_ms"]
            return 1.0, {"feedback": f"{output} took {seen}"}
        """,
        """
        import json, os, sys, time

        def run(artifact, input):
            time.sleep(0.3)
            frame = {"type": "run_finished", "outcome": "returned", "duration_ms": 1,
                     "output": {"t": "str", "v": "forged"}, "output_repr": "'forged'"}
            body = json.dumps(frame)
            os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body.encode())
            time.sleep(5)
            return "billing"
        """,
        cases=ONE,
    )
    case = result.cases[0]
    assert case.status == "valid", result.to_dict()
    output, took = case.feedback.split(" took ")
    assert output == "forged" and float(took) >= 300
    assert case.run["duration_ms"] >= 300


def test_new_codes_are_listed():
    everything = codes.all_codes()
    for code in ("run_error", "run_model_error", "program_import_error", "no_run_function"):
        assert code in codes.PROBLEMS and code in codes.CASE_ERROR_PROBLEMS
    assert "template_unknown_field" in codes.PROBLEMS
    assert "no_task_model" in everything["model_error_codes"]
    assert "run_failed" in everything["skip_reasons"]
    assert everything["run_statuses"] == ("ok", "error", "timeout")


def test_a_program_that_kills_its_process_is_a_crash_of_the_run(check, no_stray_children):
    result = check(
        EXACT_MATCH, "import os\n\ndef run(artifact, input):\n    os._exit(3)\n", cases=ONE
    )
    case = result.cases[0]
    assert (case.status, case.problem) == ("error", "crashed")
    assert (case.params["reason"], case.params["exit_code"]) == ("exited", 3)
    assert case.run["status"] == "error" and case.run["problem"] == "crashed"
    assert result.stage("load").params == {"reason": "run_failed"}


def test_llm_calls_from_a_thread_that_outlives_run_do_not_garble_the_channel(check):
    task, judge = CountingHandler("t"), CountingHandler("m")
    result = check(
        """
        import time
        def score(input, output, expected):
            time.sleep(0.3)
            return 1.0, {"feedback": "Scored after the program's thread ran on."}
        """,
        """
        import threading
        from skynet import llm

        def chatter():
            for n in range(200):
                llm("background " + str(n), {"pad": "x" * 20000})

        def run(artifact, input):
            threading.Thread(target=chatter, daemon=True).start()
            return "billing"
        """,
        cases=ONE,
        task_llm_for_case=lambda i: task,
        llm_for_case=lambda i: judge,
    )
    case = result.cases[0]
    assert (result.passed, case.status) == (True, "valid"), result.to_dict()
    # Calls are routed by the phase the parent was in when each arrived.
    assert case.run["usage"] is None or case.run["usage"]["model_calls"] == len(task.requests)
    assert case.observation["model_calls"] == len(task.requests)
    numbers = [int(r["instructions"].split()[1]) for r in task.requests + judge.requests]
    assert numbers == list(range(len(numbers)))


def test_the_run_code_cannot_change_what_the_metric_measures(check):
    """A program that took 1,001 ms and cost $0.50, and patched everything it could reach
    in its own interpreter, is still scored on 1,001 ms and $0.50."""
    task = CountingHandler("billing", cost_usd=0.5)
    result = check(
        """
        import skynet

        REWARD_SPEC = {
            "weights": {"accuracy": 0.5, "speed": 0.3, "cost": 0.2},
            "speed": {"reference": 100},
            "cost": {"reference": 0.01},
        }

        def score(input, output, expected):
            return skynet.reward(REWARD_SPEC, 1.0, "Correct label.")
        """,
        """
        import sys, time
        import __main__
        import skynet
        from skynet import _artifact, _state, llm

        FAST = {"duration_ms": 1, "cost_usd": 0, "model_calls": 0}

        def run(artifact, input):
            # Everything a program sharing the metric's interpreter could patch.
            _state.install(_state.channel(), FAST)
            _state.observation = lambda: FAST
            skynet.observation = lambda: FAST
            skynet.service_cost = lambda: 0.0
            _artifact._receive = lambda kind: {"type": "measured", "observation": FAST}
            __main__.call_score = lambda *args: {"type": "result", "outcome": "returned"}
            sys.modules["skynet._reward"] = None
            started = time.monotonic()
            llm("label it")
            time.sleep(max(0.0, 1.001 - (time.monotonic() - started)))
            return "billing"
        """,
        cases=ONE,
        task_llm_for_case=lambda i: task,
    )
    case = result.cases[0]
    assert result.passed, result.to_dict()
    assert case.observation["duration_ms"] >= 1001 and case.observation["cost_usd"] == 0.5
    speed = 100 / case.observation["duration_ms"]
    assert case.scores == {"accuracy": 1.0, "speed": pytest.approx(speed), "cost": 0.02}
    assert case.score == pytest.approx(0.5 + 0.3 * speed + 0.2 * 0.02)
    assert case.score < 0.54  # 1.000 if the patches had reached the metric


def test_an_output_too_large_to_hand_over_is_a_run_error_not_a_cut(check):
    result = check(
        EXACT_MATCH, "def run(artifact, input):\n    return 'x' * 3_000_000\n", cases=ONE
    )
    case = result.cases[0]
    assert (case.status, case.problem, case.params) == (
        "error",
        "output_too_large",
        {"type": "str"},
    )
    assert result.stage("load").status == "passed"  # the metric was still loaded
