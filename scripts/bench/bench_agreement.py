#!/usr/bin/env python3
"""What the bootstrap intervals of contract.agreement cost on 10,000 rows, against the
bare point estimates from scikit-learn and scipy, in one run.

    .venv/bin/python scripts/bench/bench_agreement.py [--rows 10000] [--resamples 1000] [--rounds 5]

The data is made here, the same every run: a metric score in 0..1 a row; a human score on
1..5 that follows it with noise (the common case: Kendall's tau on its vectorized path);
human labels bad/ok/good against the metric's verdicts; a second person's 1..5 scores
for kappa_between. Apart from the five functions, the uncommon case: a human score of
any value (no two alike), where Kendall's tau goes through scipy on fewer resamples
(its "kendall resamples").

Each function is timed with --resamples (B) against its baseline, measured in the same
round: what it adds the intervals to, the same figures from scikit-learn and scipy once
(label_agreement: confusion_matrix, accuracy_score, cohen_kappa_score and
precision_recall_fscore_support; score_agreement: spearmanr and kendalltau;
kappa_between: two cohen_kappa_score and accuracy_score); for metric_classes and
disagreement, which have no interval, the numpy one-liner of the same (searchsorted, and
abs of a difference). Each number is the median of --rounds, the function and its
baseline alternated, on the process's CPU clock (other work on the machine slows the
wall clock: compare the ratios across runs). The target: the five under 1 s in all with
B = 1000, as the worker computes the summary once when an evaluation ends.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn import metrics as sk  # noqa: E402

from contract import agreement  # noqa: E402 - needs the project root on sys.path

CLASSES = ["bad", "ok", "good"]


def data(rows: int) -> dict:
    rng = np.random.default_rng(0)
    metric = rng.random(rows)
    human = np.clip(np.round(1 + 4 * metric + rng.normal(0, 0.8, rows)), 1, 5)
    second = np.clip(human + rng.integers(-1, 2, rows), 1, 5)
    labels = [CLASSES[int(v)] for v in np.clip((human - 1) // 1.5, 0, 2)]
    return {
        "metric": metric.tolist(),
        "human": human.tolist(),
        "continuous": (human + rng.random(rows)).tolist(),
        "second": second.tolist(),
        "unit": ((human - 1) / 4).tolist(),
        "labels": labels,
        "verdicts": agreement.metric_classes(metric.tolist(), CLASSES),
    }


def cases(d: dict, resamples: int) -> list[tuple[str, object, object]]:
    """(name, the function with its intervals, its baseline): the five functions, then
    the uncommon case."""
    scores = np.array(d["metric"])

    def label_points():
        h, m = d["labels"], d["verdicts"]
        sk.confusion_matrix(h, m, labels=CLASSES)
        sk.accuracy_score(h, m)
        sk.cohen_kappa_score(h, m, labels=CLASSES)
        sk.precision_recall_fscore_support(h, m, labels=CLASSES, zero_division=np.nan)

    def score_points(human):
        def run():
            stats.spearmanr(human, d["metric"])
            stats.kendalltau(human, d["metric"])

        return run

    def rater_points():
        sk.cohen_kappa_score(d["human"], d["second"])
        sk.cohen_kappa_score(d["human"], d["second"], weights="quadratic")
        sk.accuracy_score(d["human"], d["second"])

    return [
        (
            "label_agreement",
            lambda: agreement.label_agreement(
                d["labels"], d["verdicts"], CLASSES, resamples=resamples
            ),
            label_points,
        ),
        (
            "score_agreement",
            lambda: agreement.score_agreement(
                d["human"], d["metric"], scale=(1, 5), resamples=resamples
            ),
            score_points(d["human"]),
        ),
        (
            "kappa_between",
            lambda: agreement.kappa_between(d["human"], d["second"], resamples=resamples),
            rater_points,
        ),
        (
            "metric_classes",
            lambda: agreement.metric_classes(d["metric"], CLASSES),
            lambda: np.searchsorted([1 / 3, 2 / 3], scores, side="right"),
        ),
        (
            "disagreement",
            lambda: agreement.disagreement(d["unit"], d["metric"]),
            lambda: np.abs(np.array(d["unit"]) - scores),
        ),
        (
            "score_agreement, any value",
            lambda: agreement.score_agreement(
                d["continuous"], d["metric"], scale=(1, 6), resamples=resamples
            ),
            score_points(d["continuous"]),
        ),
    ]


def measure(name: str, full, bare, rounds: int) -> float:
    """Print and return the median time of `full`, beside its baseline's."""
    full()  # warm-up: sklearn's and scipy's first calls import and cache
    bare()
    with_b, without = [], []
    for _ in range(rounds):
        seconds, result = clocked(full)
        with_b.append(seconds)
        without.append(clocked(bare)[0])
    median, base = statistics.median(with_b), statistics.median(without)
    kendall = result.get("kendall", {}).get("resamples", "") if isinstance(result, dict) else ""
    print(f"{name:28} {median:>8.3f}s {base:>8.3f}s {median / base:>6.1f}x  {kendall}")
    return median


def clocked(run) -> tuple[float, object]:
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(
        f"bench_agreement: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
        f"{args.rows:,} rows, B = {args.resamples}, median of {args.rounds} rounds"
    )
    d = data(args.rows)
    print(f"{'function':28} {'with B':>9} {'baseline':>9} {'ratio':>7}  kendall resamples")
    table = cases(d, args.resamples)
    total = 0.0
    for name, full, bare in table[:-1]:
        total += measure(name, full, bare, args.rounds)
    print(f"{'the five':28} {total:>8.3f}s")
    measure(*table[-1], args.rounds)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
