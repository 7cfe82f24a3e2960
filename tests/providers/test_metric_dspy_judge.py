"""A DSPy judge inside metric.py (a dspy.Module of the metric's own, as DSPy's GEPA
tutorials score with): in the sandbox, dspy's LM is the metric model. Each of its calls
goes over the channel skynet.llm() uses to the worker's gateway, as chat messages, and
from there to the fake provider on 127.0.0.1 in its wire format: metered and priced in
the case's usage like llm()'s, and failing as llm() fails without a metric model. The
PAPILLON tutorial's published metric, converted, scores as it does in plain Python with
a dspy.LM pointed at the same fake server."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.utils.translation import override

from contract.cases import Case
from contract.convert import convert
from contract.engine import run_check
from contract.protocol import llm_reply
from jobs import sandbox_pool
from providers.clients import ProviderClient, prompt_token_bound
from tests.providers.conftest import FAST_RETRY, ONE_CALL_METRIC, OPENAI_KEY
from tests.providers.fakes import ANTHROPIC_PATH, OPENAI_PATH
from tests.public_metrics import METRICS, load_original, normalise
from wording import render

dspy = pytest.importorskip("dspy")

MODELS = {
    "openai": ("openai/test-gpt", OPENAI_PATH),
    "anthropic": ("anthropic/test-claude", ANTHROPIC_PATH),
}
QUESTION = {"question": "What is the capital of France?"}
RIGHT_AND_WRONG = [Case(input=QUESTION, output="Paris"), Case(input=QUESTION, output="Lyon")]

# A judge built from a signature string, as the brief's example writes it.
STRING_JUDGE = """
import dspy

judge = dspy.ChainOfThought("question, answer -> verdict: bool")


def score(input, output, expected=None):
    result = judge(question=input["question"], answer=output)
    return (1.0 if result.verdict else 0.0), {"feedback": result.reasoning}
"""

# The same judge from a dspy.Signature class, with instructions of its own.
CLASS_JUDGE = """
import dspy


class Verdict(dspy.Signature):
    \"\"\"Decide whether the answer answers the question correctly.\"\"\"

    question: str = dspy.InputField()
    answer: str = dspy.InputField()
    verdict: bool = dspy.OutputField()


judge = dspy.ChainOfThought(Verdict)


def score(input, output, expected=None):
    result = judge(question=input["question"], answer=output)
    return (1.0 if result.verdict else 0.0), {"feedback": result.reasoning}
"""

# What DSPy's ChatAdapter sends and reads: [[ ## field ## ]] sections.
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with |\Z)", re.S)


def fields(text: str) -> dict[str, str]:
    return {name: value.strip() for name, value in _FIELD.findall(text)}


def chat_answer(reasoning: str, **outputs: object) -> str:
    parts = [f"[[ ## reasoning ## ]]\n{reasoning}"]
    parts += [f"[[ ## {name} ## ]]\n{value}" for name, value in outputs.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def capital_judge(request) -> str:
    """The fake model as a DSPy judge of the capitals question."""
    asked = fields(request.user)
    right = asked.get("answer") == "Paris"
    why = "Paris is the capital of France." if right else "The capital of France is Paris."
    return chat_answer(why, verdict=right)


def check(source: str, gw, cases, **options):
    """The check as the worker runs it: the worker's sandbox (dspy staged in it), the
    metric's calls answered by `gw` (a ModelGateway) or, when None, by nobody."""
    return run_check(
        textwrap.dedent(source).lstrip("\n"),
        cases,
        timeout_s=30,
        llm_for_case=gw.for_case if gw is not None else None,
        sandbox_config=sandbox_pool.base_config(),
        **options,
    )


@pytest.mark.parametrize("vendor", sorted(MODELS))
@pytest.mark.parametrize("source", [STRING_JUDGE, CLASS_JUDGE], ids=["string", "signature"])
def test_a_dspy_judge_in_the_metric_asks_the_metric_model_and_is_counted_like_llm(
    vendor, source, provider, gateway
):
    model_id, path = MODELS[vendor]
    provider.respond = capital_judge
    gw = gateway(model_id)
    result = check(source, gw, RIGHT_AND_WRONG)

    assert result.passed, result.to_dict()
    right, wrong = result.cases
    assert (right.score, right.feedback) == (1.0, "Paris is the capital of France.")
    assert (wrong.score, wrong.feedback) == (0.0, "The capital of France is Paris.")
    # Each case made one call, metered and priced as an llm() call is (the fake reports
    # 12 tokens in, 7 out, at the catalogue's prices).
    model = gw.model
    for row in result.cases:
        assert row.usage["model_calls"] == 1
        assert (row.usage["input_tokens"], row.usage["output_tokens"]) == (12, 7)
        assert math.isclose(row.usage["cost_usd"], model.cost_usd(12, 7))
    assert gw.total()["model_calls"] == 2

    # DSPy's conversation reached the provider as messages, with the worker's key.
    assert [r.path for r in provider.requests] == [path, path]
    request = next(r for r in provider.requests if "Paris" in r.user)
    assert "Your output fields are:" in request.system
    assert fields(request.user) == {**QUESTION, "answer": "Paris"}
    if vendor == "openai":
        assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
        assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    else:
        assert [m["role"] for m in request.body["messages"]] == ["user"]
    if source == CLASS_JUDGE:
        assert "Decide whether the answer answers the question correctly." in request.system


def test_the_judges_calls_show_in_the_check_as_llm_calls_do(provider, gateway):
    """The case rows' usage is the same shape for a DSPy judge as for llm(): the panel
    shows its calls, tokens and cost the same way."""
    provider.respond = capital_judge
    judged = check(STRING_JUDGE, gateway("openai/test-gpt"), RIGHT_AND_WRONG[:1]).to_dict()
    provider.respond = None
    asked = check(ONE_CALL_METRIC, gateway("openai/test-gpt"), RIGHT_AND_WRONG[:1]).to_dict()
    judge_usage, llm_usage = judged["cases"][0]["usage"], asked["cases"][0]["usage"]
    assert set(judge_usage) == set(llm_usage)
    assert {k: judge_usage[k] for k in ("model_calls", "input_tokens", "output_tokens")} == {
        k: llm_usage[k] for k in ("model_calls", "input_tokens", "output_tokens")
    }


def test_without_a_metric_model_the_judge_fails_the_case_as_llm_does(provider):
    judged = check(STRING_JUDGE, None, RIGHT_AND_WRONG[:1])
    asked = check(ONE_CALL_METRIC, None, RIGHT_AND_WRONG[:1])

    assert judged.passed is False and judged.failed_stage == "call"
    (row,) = judged.cases
    assert (row.status, row.problem) == ("error", "model_error")
    assert row.params == {"code": "no_metric_model", "message": ""}
    assert row.usage is None
    # The traceback still points at the judge's call in metric.py.
    assert any(frame["text"].startswith("result = judge(") for frame in row.traceback)
    with override("en"):
        judge_words = render(judged.to_dict())["cases"][0]["message"]
        llm_words = render(asked.to_dict())["cases"][0]["message"]
    assert judge_words == llm_words
    assert "no metric model or reflection model is selected" in judge_words
    assert provider.requests == []


# A metric that configures an LM of its own, as a DSPy script does: in the sandbox the
# metric model answers it, and the check says so.
OWN_LM = """
import dspy

dspy.configure(lm=dspy.LM("openai/gpt-4.1-mini", api_key="sk-user-own-key", temperature=0.3))
judge = dspy.ChainOfThought("question, answer -> verdict: bool")


def score(input, output, expected=None):
    result = judge(question=input["question"], answer=output)
    return (1.0 if result.verdict else 0.0), {"feedback": result.reasoning}
"""


def test_an_lm_the_metric_sets_itself_is_answered_by_the_metric_model_and_said(provider, gateway):
    provider.respond = capital_judge
    gw = gateway("openai/test-gpt")
    result = check(OWN_LM, gw, RIGHT_AND_WRONG)

    assert result.passed, result.to_dict()
    assert [row.score for row in result.cases] == [1.0, 0.0]
    assert [row.usage["model_calls"] for row in result.cases] == [1, 1]
    # To the catalogue's model, with the worker's key: never the metric's own.
    for request in provider.requests:
        assert request.body["model"] == "gpt-test"
        assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    load = result.stage("load")
    assert load.status == "passed"
    assert load.warnings == [
        {"code": "dspy_lm_replaced", "params": {"models": "openai/gpt-4.1-mini", "count": 1}}
    ]
    with override("en"):
        shown = render(result.to_dict())
    (words,) = next(s for s in shown["stages"] if s["id"] == "load")["warnings"]
    assert words.startswith("metric.py sets its own DSPy LM (openai/gpt-4.1-mini).")
    assert "metric model" in words


def test_a_judge_given_its_lm_with_set_lm_is_said_too(provider, gateway):
    provider.respond = capital_judge
    source = STRING_JUDGE.replace(
        'judge = dspy.ChainOfThought("question, answer -> verdict: bool")',
        'judge = dspy.ChainOfThought("question, answer -> verdict: bool")\n'
        'judge.set_lm(dspy.LM("anthropic/claude-sonnet-4-5"))',
    )
    result = check(source, gateway("openai/test-gpt"), RIGHT_AND_WRONG[:1])
    assert result.passed, result.to_dict()
    assert result.stage("load").warnings[0]["params"]["models"] == "anthropic/claude-sonnet-4-5"


# -- PAPILLON: the tutorial's judge modules, converted, against the original -------------

PAPILLON = next(entry for entry in METRICS if entry.name == "papillon_metric_with_feedback")
QUALITY = "Is response A at least as good as response B?"
LEAKAGE = "Count the number information pieces in `pii`"


def papillon_judge(request) -> str:
    """The fake model as PAPILLON's two judges, in ChatAdapter's format: response A is at
    least as good as B when it is about the boiler and at least half as long; a piece of
    PII is leaked when it appears in the prompt."""
    asked = fields(request.user)
    if QUALITY in (request.system or ""):
        a, b = asked.get("response_A", ""), asked.get("response_B", "")
        good = "boiler" in a.lower() and len(a) >= len(b) / 2
        return chat_answer("Compared the two responses.", judgment=good)
    if LEAKAGE in (request.system or ""):
        pieces = re.findall(r"«(.*?)»", asked.get("pii", ""))
        leaked = sum(1 for piece in pieces if piece and piece in asked.get("prompt", ""))
        return chat_answer("Counted the pieces found in the prompt.", num_pii_leaked=leaked)
    return chat_answer("?", unknown="?")


def converted_papillon() -> str:
    """The published metric through Convert, as Convert gives it: compute_metrics reads a
    dspy.Example and a dspy.Prediction (gold.user_query, pred.response), and the
    conversion rebuilds both from the case, so no hand work is left."""
    conversion = convert(PAPILLON.file.read_text())
    assert conversion.changed and conversion.framework == "dspy"
    assert {note.code for note in conversion.notes} <= {
        "other_metric_functions",
        "dspy_still_used",
        "trace_used",
    }
    assert "metrics = compute_metrics(gold, pred, trace)" in conversion.source
    return conversion.source


def original_scores(provider) -> list[tuple[float, str]]:
    """The original, called as DSPy calls a metric, with a dspy.LM on the fake server."""
    fn = load_original(PAPILLON)
    lm = dspy.LM("openai/gpt-test", api_base=f"{provider.url}/v1", api_key=OPENAI_KEY, cache=False)
    found = []
    with dspy.context(lm=lm):
        for case in PAPILLON.cases:
            gold = dspy.Example(**{**case["input"], **case["expected"]}).with_inputs(
                *PAPILLON.input_columns
            )
            score, feedback = normalise(fn(gold, dspy.Prediction(**case["output"])))
            found.append((float(score), feedback or ""))
    return found


def test_papillons_converted_metric_passes_and_scores_as_the_original(provider, gateway):
    provider.respond = papillon_judge
    want = original_scores(provider)
    original_requests = len(provider.requests)
    assert original_requests == 3 * len(PAPILLON.cases)  # two quality judgments, one leak count
    assert len({score for score, _ in want}) > 1  # the cases reach more than one score

    cases = [
        Case(input=dict(c["input"]), output=dict(c["output"]), expected=dict(c["expected"]))
        for c in PAPILLON.cases
    ]
    gw = gateway("openai/test-gpt")
    result = check(converted_papillon(), gw, cases)

    assert result.passed, [(c.status, c.problem, c.params) for c in result.cases]
    assert not result.stage("load").warnings  # the tutorial's LM line is left out
    got = [(row.score, row.feedback) for row in result.cases]
    assert got == want
    # Three judge calls a case, each counted in its case's usage.
    assert [row.usage["model_calls"] for row in result.cases] == [3] * len(cases)
    sent = provider.requests[original_requests:]
    assert len(sent) == 3 * len(cases)
    assert all([m["role"] for m in r.body["messages"]] == ["system", "user"] for r in sent)


# -- the channel's conversations, parent side ------------------------------------------


def test_a_conversation_reaches_the_handler_with_its_text_for_those_that_read_only_that():
    seen = []
    frame = {
        "type": "llm",
        "messages": [
            {"role": "system", "content": "Judge."},
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "A1"},
            {"role": "user", "content": "Q2"},
        ],
    }
    reply = llm_reply(lambda request: seen.append(request) or {"text": "ok"}, frame)
    assert reply == {"type": "llm_reply", "text": "ok"}
    (request,) = seen
    assert request["messages"] == frame["messages"]
    assert request["input"] is None
    assert request["instructions"] == "Judge.\n\n[user]\nQ1\n\n[assistant]\nA1\n\n[user]\nQ2"

    for bad in ([], [{"role": "tool", "content": "x"}], [{"role": "user"}], "Q"):
        reply = llm_reply(lambda request: {"text": "never"}, {"type": "llm", "messages": bad})
        assert reply == {"type": "llm_reply", "error": "protocol", "message": ""}


@pytest.mark.parametrize("vendor", sorted(MODELS))
def test_a_conversation_with_demonstrations_is_sent_as_messages(vendor, provider, catalogue):
    model_id, _ = MODELS[vendor]
    model = catalogue.resolve(model_id)
    messages = [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of Peru?"},
        {"role": "assistant", "content": "Lima"},
        {"role": "user", "content": "Capital of France?"},
    ]
    key = catalogue.env[model.api_key_env]
    with ProviderClient(
        model, api_key=key, env=catalogue.env, timeout_s=2, retry=FAST_RETRY
    ) as client:
        client.complete("ignored", "ignored", messages=messages)
    (request,) = provider.requests
    assert request.system == "Answer in one word."
    turns = [m for m in request.body["messages"] if m["role"] != "system"]
    assert turns == messages[1:]
    # The budget's bound counts every message sent.
    texts = sum(len(m["content"].encode()) for m in messages)
    assert prompt_token_bound("ignored", "ignored", messages) == texts + 16 * 5


# -- the child's side, in a process of its own (it changes dspy for the whole process) --

WATCHED = """
import importlib.util, sys
from skynet import _dspy_metric

_dspy_metric.watch()
assert importlib.util.find_spec("dspy") is not None  # looking is not importing
import dspy

assert dspy.settings.lm.model == "skynet/metric", dspy.settings.lm
assert not any(isinstance(f, _dspy_metric._Watch) for f in sys.meta_path)
own = dspy.LM("openai/gpt-4.1-mini", api_key="sk-own")
judge = dspy.Predict("question -> answer")
judge.set_lm(own)
print(_dspy_metric.own_lms({"judge": judge, "own": own, "text": "not an LM"}))
try:
    judge(question="?")
except Exception as exc:
    print(type(exc).__name__, type(exc.__cause__).__name__, exc.__cause__.code)
"""


def test_dspy_is_set_up_when_imported_and_its_own_lms_are_named_and_redirected():
    runtime = Path(__file__).resolve().parents[2] / "runtime"
    done = subprocess.run(
        [sys.executable, "-c", WATCHED],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(runtime)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Outside a check there is no channel: the redirected LM's call says so as llm() does.
    assert done.stdout.splitlines() == [
        "['openai/gpt-4.1-mini']",
        "LMUnexpectedError ModelError no_channel",
    ]
