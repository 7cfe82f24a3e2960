"""A judge's noise measured end to end: a real Celery worker scores each of 60 cases 3
times with a metric that asks a model, and the model is a server on 127.0.0.1 speaking
OpenAI's wire format that answers "1" with probability p, else "0". The flip share the
summary measures must hold the rate such a judge flips at, and be exactly the share the
server's own answers make."""

from __future__ import annotations

import hashlib
import random
import threading
from collections import defaultdict

import pytest

from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from evaluations.services import evaluation_create
from tests.conftest import wait_for
from tests.evaluations.evaluation_data import make_dataset

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

ROWS = 60
K = 3
P = 0.5
# A judge that passes with p, asked K times, gives K equal verdicts with p**K + (1-p)**K.
EXPECTED_FLIP_SHARE = 1 - P**K - (1 - P) ** K  # 0.75
SEED = 4

JUDGE_METRIC = """
from skynet import llm


def score(input, output, expected=None):
    answer = str(llm("Is the answer right? Say 1 or 0.", input=f"Question: {input['question']}"))
    return float(answer.strip()), {"feedback": f"The judge said {answer.strip()}."}
"""


class NoisyJudge:
    """The fake provider's answers: "1" with probability `p`, else "0", from a seeded
    random draw for each request. A draw is keyed by the question and how many times
    that question was asked before, not by the order requests arrive in: the worker keeps
    several cases in flight, so the order varies from run to run, while a case's own
    scorings come one after another. The answers are then the same on every run, and so
    is everything measured from them: the test is deterministic, not right 95 times in
    100. With SEED 4 the answers make 46 of the 60 cases flip (0.77, its 95% interval
    0.65 to 0.87, holding 0.75); of seeds 0 to 39, 38 give an interval that holds 0.75,
    as a 95% interval should (tests/contract/test_noise.py checks that coverage over
    200 draws). 60 cases keep the interval about ±0.11 wide and the run a few seconds."""

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.seed = p, seed
        self.asked: dict[str, list[str]] = defaultdict(list)
        self.lock = threading.Lock()

    def __call__(self, request) -> str:
        question = request.user.rsplit("Question: ", 1)[-1].strip()
        with self.lock:
            turn = len(self.asked[question])
            key = hashlib.sha256(f"{self.seed}:{question}:{turn}".encode()).digest()
            answer = "1" if random.Random(key).random() < self.p else "0"
            self.asked[question].append(answer)
        return answer


@pytest.fixture
def judge(session_provider):
    judge = NoisyJudge(P, SEED)
    session_provider.respond = judge
    yield judge
    session_provider.respond = None


def test_a_judge_scored_three_times_flips_at_the_rate_its_noise_predicts(
    owner, celery_worker_process, judge
):
    evaluation = evaluation_create(
        owner=owner,
        dataset=make_dataset(owner, ROWS),
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=ROWS,
        source=JUDGE_METRIC,
        metric_model="openai/test-gpt",
        timeout_s=20,
        second=Evaluation.Second.REPEAT,
        repeats=K,
    )
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).is_final, timeout=120)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, (
        evaluation.failure,
        evaluation.failure_params,
    )

    # Every case scored K times, each scoring the server's answer to it, in order.
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert len(cases) == ROWS
    flipped = 0
    for case in cases:
        answers = judge.asked[case.case["input"]["question"]]
        scores = [case.score] + [r["score"] for r in case.repeats]
        assert [str(int(s)) for s in scores] == answers and len(answers) == K
        assert case.differs == (len(set(answers)) > 1)
        # The case's cost counts its K model calls.
        assert case.model_calls == K and case.metric_usd > 0
        flipped += len(set(answers)) > 1

    noise = evaluation.summary["noise"]
    assert noise["k"] == K and noise["n"] == ROWS
    flip_share = noise["flip_share"]
    # Measured exactly: the share of cases the server answered differently.
    assert flip_share["value"] == pytest.approx(flipped / ROWS)
    # And the interval holds the rate a judge of this noise flips at.
    assert flip_share["low"] <= EXPECTED_FLIP_SHARE <= flip_share["high"]
    # A 0/1 judge with p = 0.5: each case's variance of three scores is 1/3 when it
    # flipped, 0 when not.
    assert noise["variance"] == pytest.approx(flipped / ROWS / 3)
    assert noise["mean"]["low"] <= noise["mean"]["value"] <= noise["mean"]["high"]
    assert 0 < len(noise["examples"]) <= 10
