"""`skynet evaluate --column NAME=human`: the roles and the reading of a person's judgement
reach the API's body as the playground's form names them, a bad role or scale is a usage
error in the command line's words, and the agreement is said on the report's lines."""

from __future__ import annotations

import pytest

from skynet_client import main as client_main
from skynet_client.commands import evaluate


def body_of(*argv: str) -> dict:
    args = client_main.parser().parse_args(["evaluate", "metric.py", "data.csv", *argv])
    return evaluate.start_body(args, 1, 2, {"id": 3})


def test_the_human_roles_and_their_reading_reach_the_body():
    body = body_of(
        "--column",
        "verdict=human",
        "--column",
        "why=note",
        "--column",
        "stars=human_score",
        "--human-scale",
        "1,5",
        "--human-labels",
        "bad, ok ,good",
        "--pass-score",
        "0.7",
    )
    assert body["columns"] == {"verdict": "human", "why": "human_note", "stars": "human_score"}
    assert body["human_scale"] == [1.0, 5.0]
    assert body["human_classes"] == ["bad", "ok", "good"]
    assert body["human_threshold"] == 0.7
    plain = body_of()
    assert not {"human_scale", "human_classes", "human_threshold"} & set(plain)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--column", "verdict=people"], "ROLE must be one of input, expected, ignore, human"),
        (["--human-scale", "1-5"], "expected LOW,HIGH, two numbers, got '1-5'"),
        (["--pass-score", "high"], "invalid float value"),
    ],
)
def test_a_bad_role_or_scale_is_a_usage_error(argv, said, capsys):
    assert client_main.main(["evaluate", "metric.py", "data.csv", *argv]) == 2
    assert said in capsys.readouterr().err


def test_the_report_says_the_agreement_with_its_interval():
    labels = {
        "kind": "label",
        "compared": 40,
        "first": {
            "accuracy": {"value": 0.85, "low": 0.7, "high": 0.95},
            "kappa": {"value": 0.62, "low": 0.38, "high": 0.83},
        },
    }
    lines = evaluate.people_lines(labels)
    assert lines[0] == "agreement with people over 40 rows:"
    assert "Cohen's kappa 0.62 (95% interval 0.38 to 0.83)" in lines[2]
    scores = {
        "kind": "score",
        "compared": 12,
        "first": {"spearman": {"value": 0.5, "low": None, "high": None}},
    }
    assert "Spearman 0.5" in evaluate.people_lines(scores)[1]
    assert evaluate.people_lines(None) == []
