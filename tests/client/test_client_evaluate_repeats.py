"""`skynet evaluate --repeats K`: each case scored K times (2 to 5) in the server's
worker, the noise it measured on one line; --twice is K = 2; a K out of range is a usage
error in the command line's words, before anything is sent."""

from __future__ import annotations

import pytest

from evaluations.models import Evaluation, EvaluationCase
from skynet_client import main as client_main
from skynet_client.commands import evaluate
from tests.client.test_client_evaluate import write_data

RANDOM = """
import random

def score(input, output, expected=None):
    return random.random(), {"feedback": "drawn"}
"""


def parsed(*argv: str):
    return client_main.parser().parse_args(["evaluate", "metric.py", "data.csv", *argv])


def body_of(*argv: str) -> dict:
    return evaluate.start_body(parsed(*argv), 1, 2, {"id": 3})


def test_repeats_asks_the_server_for_k_scorings_and_twice_for_two():
    assert body_of("--repeats", "4")["second"] == "repeat"
    assert body_of("--repeats", "4")["repeats"] == 4
    assert body_of("--twice") == {
        "metric_id": 1,
        "version": 2,
        "dataset_id": 3,
        "second": "repeat",
        "repeats": 2,
    }
    assert "second" not in body_of() and "repeats" not in body_of()


@pytest.mark.parametrize("given", ["1", "6", "three"])
def test_a_k_out_of_range_is_a_usage_error_in_its_own_words(given, capsys):
    code = client_main.main(["evaluate", "metric.py", "data.csv", "--repeats", given])
    assert code == 2
    said = capsys.readouterr().err
    assert f"a case is scored 2 to 5 times in all, got {given!r}" in said


def test_twice_and_repeats_are_one_choice(capsys):
    code = client_main.main(["evaluate", "metric.py", "data.csv", "--twice", "--repeats", "3"])
    assert code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_noise_line_says_the_flip_share_and_the_means_interval():
    noise = {
        "k": 3,
        "n": 30,
        "flip_share": {"value": 0.18, "low": 0.12, "high": 0.25},
        "mean": {"value": 0.61, "low": 0.55, "high": 0.67},
    }
    assert evaluate.noise_line(noise) == (
        "scored 3 times: 18% of cases changed verdict (95% interval 12%–25%)"
        " · mean 0.61 (95% interval 0.55–0.67)"
    )
    assert evaluate.noise_line(None) == "" and evaluate.noise_line({**noise, "n": 0}) == ""


@pytest.mark.django_db(transaction=True)
@pytest.mark.integration
def test_an_evaluation_scored_three_times_through_the_server(
    cli, owner, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(RANDOM)
    write_data(tmp_path / "tickets.csv")
    done = cli("evaluate", "metric.py", "tickets.csv", "--sample", "8", "--repeats", "3")
    assert done.returncode == 0, done.stderr
    stored = Evaluation.objects.get()
    assert stored.second == "repeat" and stored.repeats == 3
    cases = EvaluationCase.objects.filter(evaluation=stored)
    assert cases.count() == 8 and all(len(case.repeats) == 2 for case in cases)
    # A random metric changes its verdict on every case.
    assert "  scored 3 times: 100% of cases changed verdict (95% interval 100%–100%)" in (
        done.stdout
    ), done.stdout
