"""The case protocols as pure code: frames fed one by one, no process, no socket, no clock."""

from __future__ import annotations

import pytest

from contract.protocol import MetricSession, ProgramSession, crash_params, llm_reply
from skynet import wire

READY = {"type": "ready", "layers": ["namespaces", "seccomp"]}
SHAPE = {
    "positional": [["input", True], ["output", True], ["expected", False]],
    "varargs": None,
    "keyword_only": [],
    "varkw": None,
}
LOADED = {"type": "loaded", "load": {"status": "passed"}, "signature": {"shape": SHAPE}}
FEEDBACK = [{"t": "str", "v": "feedback"}, {"t": "str", "v": "Expected 'bug', got 'other'."}]
RESULT = {
    "type": "result",
    "outcome": "returned",
    "value": {
        "t": "tuple",
        "items": [{"t": "float", "v": 0.0}, {"t": "dict", "items": [FEEDBACK]}],
    },
    "repr": "(0.0, {...})",
}


def metric_session(**changes):
    asked, loaded = [], []
    options = dict(timeout_s=10, started=100.0, ask=asked.append, on_loaded=loaded.append)
    return MetricSession(**{**options, **changes}), asked, loaded


def test_a_metric_conversation_from_ready_to_result():
    session, asked, loaded = metric_session()
    assert session.deadline == 110.0
    assert not session.handle(READY, 100.5)
    assert not session.handle(LOADED, 101.0)
    # Calling gets a time limit of its own, counted from "loaded".
    assert session.deadline == 111.0 and loaded[0]["call_args"] == 3
    assert not session.handle({"type": "llm", "instructions": "Judge."}, 101.2)
    assert asked == [{"type": "llm", "instructions": "Judge."}]
    assert session.handle(RESULT, 101.25)
    outcome = session.outcome
    assert outcome.layers == ["namespaces", "seccomp"] and outcome.failure is None
    report = outcome.result["return"]
    assert (report["problem"], report["score"]) == (None, 0.0)
    assert report["feedback"] == "Expected 'bug', got 'other'."
    # The worker's clock, never the child's.
    assert outcome.duration_ms == pytest.approx(250.0)


def test_a_bad_signature_ends_the_conversation_at_loaded():
    session, _, _ = metric_session()
    session.handle(READY, 100.0)
    shape = {**SHAPE, "positional": [["input", True]]}
    assert session.handle({**LOADED, "signature": {"shape": shape}}, 100.1)
    stage = session.outcome.loaded["stages"]["signature"]
    assert (stage["status"], stage["params"]["reason"]) == ("failed", "too_few_parameters")


@pytest.mark.parametrize(
    "frames",
    [
        [RESULT],  # a result before "ready"
        [READY, RESULT],  # a result before "loaded"
        [READY, LOADED, LOADED],  # loaded twice
        [READY, {"type": "program_loaded"}],  # another protocol's frame
    ],
)
def test_frames_out_of_order_are_a_protocol_error(frames):
    session, _, _ = metric_session()
    with pytest.raises(wire.ProtocolError):
        for frame in frames:
            session.handle(frame, 100.0)


def test_a_fatal_frame_is_a_crash_with_a_known_reason_only():
    session, _, _ = metric_session()
    assert session.handle({"type": "fatal", "reason": "confine_failed"}, 100.0)
    assert session.outcome.failure_params == crash_params("confine_failed")
    other, _, _ = metric_session()
    other.handle({"type": "fatal", "reason": "made-up"}, 100.0)
    assert other.outcome.failure_params["reason"] == "internal"


def test_ending_early_is_a_timeout_or_a_crash_and_only_once():
    session, _, _ = metric_session()
    session.handle(READY, 100.0)
    session.ended("timeout")
    session.ended("crashed", crash_params("signal", signal_number=9))
    assert (session.outcome.failure, session.outcome.failure_params) == ("timeout", {"seconds": 10})


def test_a_program_gets_its_input_only_once_loaded_and_is_timed_from_then():
    sent, asked = [], []
    session = ProgramSession(
        timeout_s=5, started=200.0, input={"question": "q"}, send=sent.append, ask=asked.append
    )
    session.handle(READY, 200.1)
    assert sent == []  # nothing of the input before the program has loaded
    session.handle({"type": "program_loaded"}, 203.0)
    assert sent == [{"type": "input", "input": {"question": "q"}}]
    assert session.deadline == 208.0 and session.outcome.started_at == 203.0
    session.handle({"type": "llm", "instructions": "label"}, 203.5)
    frame = {
        "type": "run_finished",
        "outcome": "returned",
        "output": {"t": "str", "v": "billing"},
        "output_repr": "'billing'",
    }
    assert session.handle(frame, 204.0)
    assert session.outcome.calls == 1 and session.outcome.finished_at == 204.0
    assert session.outcome.finished["output"] == {"t": "str", "v": "billing"}


def test_a_run_finished_without_an_output_is_a_protocol_error():
    session = ProgramSession(timeout_s=5, started=0.0, input={}, send=lambda f: None, ask=print)
    session.handle(READY, 0.0)
    with pytest.raises(wire.ProtocolError):
        session.handle({"type": "run_finished", "outcome": "returned", "output_repr": "x"}, 1.0)


def test_llm_replies_are_the_handlers_answer_or_a_handler_error():
    def answers(request):
        return {"text": request["instructions"].upper()}

    assert llm_reply(answers, {"instructions": "hi"}) == {"type": "llm_reply", "text": "HI"}

    def breaks(request):
        raise RuntimeError("down")

    reply = llm_reply(breaks, {"instructions": "hi"})
    assert (reply["error"], reply["message"]) == ("handler_error", "")
    huge = llm_reply(lambda r: {"text": "x" * (wire.MAX_FRAME + 1)}, {"instructions": "hi"})
    assert huge["error"] == "reply_too_large"
