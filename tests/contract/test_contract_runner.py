"""The runner against hostile or clumsy metrics: output floods, fake frames,
crashes, hangs, stray threads and processes, and the skynet helpers."""

from __future__ import annotations

import os
import time

import pytest

from contract.cases import DEFAULT_CASES, Case


def test_junk_and_a_fake_frame_on_stdout_do_not_confuse_the_report(check, no_stray_children):
    result = check(
        r"""
        import sys
        fake = b'{"type": "result", "outcome": "returned"}'
        def score(input, output):
            sys.stdout.buffer.write(len(fake).to_bytes(4, "big") + fake + b"\xff\x00junk")
            sys.stdout.flush()
            print("more junk", file=sys.stderr)
            return 0.5, {"feedback": "Expected bug, got other."}
        """,
        one=True,
    )
    case = result.cases[0]
    assert result.passed and (case.score, case.status) == (0.5, "valid")
    assert '"type": "result"' in case.stdout and "junk" in case.stdout
    assert case.stderr == "more junk\n"


def test_garbage_written_to_the_channel_is_a_protocol_crash(check, no_stray_children):
    result = check(
        """
        import os, sys
        def score(input, output):
            os.write(int(sys.argv[1]), b"\\x00\\x00\\x00\\x05hello")
            return 1.0, {"feedback": "never seen"}
        """,
        one=True,
    )
    case = result.cases[0]
    assert (case.status, case.problem, case.params["reason"]) == ("error", "crashed", "protocol")


def test_oversized_frame_length_is_a_protocol_crash(check):
    result = check(
        """
        import os, sys
        def score(input, output):
            os.write(int(sys.argv[1]), (50 << 20).to_bytes(4, "big"))
            while True:
                pass
        """,
        one=True,
    )
    assert result.stage("load").status == "passed"
    assert result.cases[0].params["reason"] == "protocol"


def test_output_floods_are_capped_and_counted(check, no_stray_children):
    started = time.monotonic()
    result = check(
        """
        import sys
        def score(input, output):
            sys.stdout.write("x" * 5_000_000)
            sys.stderr.write("y" * 3_000_000)
            return 1.0, {"feedback": "Matches the label."}
        """,
        one=True,
    )
    case = result.cases[0]
    assert result.passed
    assert (len(case.stdout), case.stdout_truncated) == (65536, 5_000_000 - 65536)
    assert (len(case.stderr), case.stderr_truncated) == (65536, 3_000_000 - 65536)
    assert time.monotonic() - started < 10


def test_twenty_megabyte_feedback_is_capped(check):
    result = check(
        """
        def score(input, output):
            return 1.0, {"feedback": "z" * 20_000_000}
        """,
        one=True,
    )
    case = result.cases[0]
    assert case.status == "valid"
    assert (len(case.feedback), case.feedback_length) == (65536, 20_000_000)
    assert len(case.repr) <= 2048


def test_infinite_loop_times_out_and_the_next_check_runs_normally(check, no_stray_children):
    started = time.monotonic()
    result = check(
        "def score(input, output):\n    while True:\n        pass\n", one=True, timeout_s=1
    )
    assert result.cases[0].status == "timeout"
    assert time.monotonic() - started < 5
    assert check('def score(i, o):\n    return 1.0, {"feedback": "Fine label."}\n').passed


def test_hanging_repr_is_caught_by_the_clock(check):
    result = check(
        """
        class Slow:
            def __repr__(self):
                while True:
                    pass
        def score(input, output):
            return Slow(), {"feedback": "x"}
        """,
        one=True,
        timeout_s=1,
    )
    assert result.cases[0].status == "timeout"


def test_raising_repr_falls_back_to_the_type_name(check):
    result = check(
        """
        class Odd(tuple):
            def __repr__(self):
                raise SystemExit
        def score(input, output):
            return Odd((1.0, {"feedback": "Matches the label."}))
        """,
        one=True,
    )
    case = result.cases[0]
    assert case.status == "valid" and case.repr == "<metric.Odd>"


def test_non_daemon_threads_and_child_processes_do_not_outlive_the_check(check, no_stray_children):
    marker = "61.2345"
    started = time.monotonic()
    result = check(
        f"""
        import os, threading, time
        def score(input, output):
            threading.Thread(target=time.sleep, args=(60,)).start()
            if os.fork() == 0:
                os.setsid()
                os.execv("/bin/sleep", ["sleep", "{marker}"])
            return 1.0, {{"feedback": "Matches the label."}}
        """,
        one=True,
    )
    assert result.passed
    assert time.monotonic() - started < 10
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    leftovers.append(pid)
        except OSError:
            pass
    assert leftovers == []


def test_deep_recursion_traceback_is_trimmed(check):
    case = check(
        """
        def score(input, output):
            return score(input, output)
        """,
        one=True,
    ).cases[0]
    assert case.params["type"] == "RecursionError"
    assert len(case.traceback) == 40
    assert case.exception["omitted_frames"] > 0
    assert all(
        f == {"line": 2, "function": "score", "text": "return score(input, output)"}
        for f in case.traceback
    )


def test_long_exception_message_is_capped(check):
    case = check("def score(i, o):\n    raise ValueError('m' * 100000)\n", one=True).cases[0]
    assert len(case.params["message"]) == 2048


def test_lone_surrogates_cross_the_wire(check):
    case = check(
        'def score(i, o):\n    return 1.0, {"feedback": "ab\\ud800cd is fine"}\n', one=True
    )
    assert case.cases[0].feedback == "ab?cd is fine"


def test_many_named_scores_are_capped(check):
    case = check(
        """
        def score(i, o):
            return 1.0, {"feedback": "x", "scores": {str(n): n for n in range(500)}}
        """,
        one=True,
    ).cases[0]
    assert case.status == "valid"
    assert (len(case.scores), case.scores_omitted) == (100, 400)


def test_observation_is_the_cases_recorded_one_and_read_only(check):
    cases = [
        Case({"q": 1}, "a", None, {"duration_ms": 1500, "cost_usd": 0.002, "model_calls": 2}),
    ]
    result = check(
        """
        import skynet
        from skynet import _state
        def score(input, output):
            obs = skynet.observation()
            try:
                obs["cost_usd"] = 0
                mutated = "mutated"
            except TypeError:
                mutated = "read-only"
            seen = dict(obs)
            _state.install(None, {"cost_usd": 0, "duration_ms": 1})  # tampering
            return 1.0, {"feedback": f"{mutated} {seen} {skynet.service_cost()}"}
        """,
        cases=cases,
    )
    case = result.cases[0]
    assert case.feedback.startswith("read-only {'duration_ms': 1500, 'cost_usd': 0.002, ")
    assert case.feedback.endswith("'output_tokens': None} 0")
    assert case.observation == {
        "duration_ms": 1500,
        "cost_usd": 0.002,
        "model_calls": 2,
        "input_tokens": None,
        "output_tokens": None,
    }


def test_unmeasured_observation_is_none(check):
    cases = [Case({"q": 1}, "a")]
    result = check(
        """
        import skynet
        def score(i, o):
            return 1.0, {"feedback": repr(skynet.service_cost())}
        """,
        cases=cases,
    )
    assert result.cases[0].feedback == "None"


def test_llm_requests_are_answered_by_on_llm(check):
    requests = []

    def on_llm(request):
        requests.append(request)
        return {"text": "billing"}

    result = check(
        """
        import skynet
        def score(input, output):
            label = skynet.llm("Label this", {"question": input["question"]})
            return 1.0, {"feedback": "The model said " + label}
        """,
        one=True,
        on_llm=on_llm,
    )
    assert result.cases[0].feedback == "The model said billing"
    assert requests == [
        {"instructions": "Label this", "input": {"question": DEFAULT_CASES[1].input["question"]}}
    ]


def test_llm_handler_errors_become_model_errors(check):
    def broken(request):
        raise RuntimeError("boom")

    source = "import skynet\ndef score(i, o):\n    return skynet.llm('x'), {}\n"
    case = check(source, one=True, on_llm=broken).cases[0]
    assert (case.problem, case.params["code"]) == ("model_error", "handler_error")
    case = check(source, one=True, on_llm=lambda r: {"error": "quota", "message": "m"}).cases[0]
    assert case.params == {"code": "quota", "message": "m"}


def test_layers_are_reported(check):
    result = check('def score(i, o):\n    return 1.0, {"feedback": "Fine label."}\n', one=True)
    assert isinstance(result.layers, list)
    assert all(isinstance(layer, str) for layer in result.layers)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (
            {"type": "result", "outcome": "returned", "duration_ms": 1, "return": {"score": "x"}},
            "protocol",
        ),
        ({"type": "ready", "layers": []}, "protocol"),
        ({"type": "fatal", "reason": "confine_failed"}, "confine_failed"),
    ],
)
def test_forged_frames_are_checked(check, frame, reason):
    result = check(
        f"""
        import json, os, sys
        def score(input, output):
            body = json.dumps({frame!r}).encode()
            os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body)
            while True:
                pass
        """,
        one=True,
    )
    case = result.cases[0]
    assert (case.problem, case.params["reason"]) == ("crashed", reason)


def _writes_its_own_result(value: dict, repr_text: str, claims: dict) -> str:
    """A metric whose score() writes a result frame of its own, then spins. The string
    "HUGE" in the frame becomes 900,000 characters (more than metric.py may hold)."""
    frame = {"type": "result", "outcome": "returned", "value": value, "repr": repr_text, **claims}
    return f"""
        import json, os, sys
        def score(input, output):
            text = json.dumps({frame!r}).replace('"HUGE"', json.dumps("f" * 900_000))
            body = text.encode()
            os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body)
            while True:
                pass
        """


def _pair(score: dict, feedback: dict) -> dict:
    feedback_key = {"t": "str", "v": "feedback"}
    return {"t": "tuple", "items": [score, {"t": "dict", "items": [[feedback_key, feedback]]}]}


def test_a_result_frame_the_metric_writes_itself_is_judged_by_the_worker(check):
    """The child only describes a value: the verdict, the duration and the feedback cap
    are the worker's, whatever the frame claims."""
    value = _pair({"t": "float", "v": -1e300}, {"t": "str", "v": "HUGE"})
    claims = {"duration_ms": -99999, "return": {"problem": None, "score": 1.0}}
    result = check(_writes_its_own_result(value, "(1.0, {'feedback': 'x'})", claims), one=True)
    case = result.cases[0]
    assert case.status == "valid" and case.score == -1e300  # what it described, not claimed
    assert case.duration_ms >= 0 and case.duration_ms == case.parent_duration_ms
    assert len(case.feedback) == 65536 and case.feedback_length == 900_000
    assert "score_out_of_range" in {hint.code for hint in result.hints}


def test_a_forged_verdict_on_an_invalid_value_is_not_believed(check):
    value = _pair({"t": "str", "v": "0.8"}, {"t": "str", "v": "ok"})
    claims = {"return": {"problem": None, "score": 0.8, "feedback": "ok"}}
    result = check(_writes_its_own_result(value, "('0.8', {'feedback': 'ok'})", claims), one=True)
    case = result.cases[0]
    assert (case.status, case.problem, case.params["type"]) == (
        "invalid",
        "score_not_number",
        "str",
    )
    # The corrected return is built from what the worker decoded, not from the claim.
    assert case.params["fix"] == 'return 0.8, {"feedback": "ok"}'
    assert result.failed_stage == "return_value"


def test_a_forged_loaded_frame_cannot_pass_a_bad_signature(check):
    """The stages come from the worker's rules on what the child saw, not from the child."""
    result = check(
        """
        import json, os, sys
        frame = {"type": "loaded", "load": {"status": "passed"},
                 "signature": {"shape": {"positional": [["input", True]], "varargs": None,
                                         "keyword_only": [], "varkw": None}},
                 "reward_spec": None,
                 "stages": {"signature": {"status": "passed"}}, "call_args": 2}
        body = json.dumps(frame).encode()
        os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body)
        def score(input, output):
            return 1.0, {"feedback": "Fine label."}
        """,
        one=True,
    )
    signature = result.stage("signature")
    assert (signature.status, signature.problem) == ("failed", "bad_signature")
    assert signature.params["reason"] == "too_few_parameters"


def test_a_cut_of_printed_output_is_recorded_with_how_much_was_printed(check):
    result = check(
        """
        def score(input, output):
            for n in range(20_000):
                print("line", n)
            return 1.0, {"feedback": "Matches the label."}
        """,
        one=True,
    )
    case = result.cases[0]
    printed = sum(len(f"line {n}\n") for n in range(20_000))
    assert case.stdout_printed == printed
    assert case.stdout.endswith("\n") and len(case.stdout) <= 65536
    assert case.stdout_truncated == printed - len(case.stdout)
    hint = next(h for h in result.hints if h.code == "printed_output")
    assert (hint.case, hint.params) == (0, {"printed": printed, "cut": case.stdout_truncated})


def test_a_little_printing_gets_no_hint(check):
    result = check(
        """
        def score(input, output):
            print("looking at", output)
            return 1.0, {"feedback": "Matches the label."}
        """,
        one=True,
    )
    assert result.cases[0].stdout_printed == len("looking at other\n")
    assert not [h for h in result.hints if h.code == "printed_output"]
