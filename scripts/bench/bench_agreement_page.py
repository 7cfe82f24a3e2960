#!/usr/bin/env python3
"""What the agreement with people adds to an evaluation of 10,000 rows: its summary (the
worker computes it once, when the evaluation ends) and its results page, each against
the same evaluation without human columns, in one run.

    .venv/bin/python scripts/bench/bench_agreement_page.py [--rows 10000] [--requests 15]

A private SQLite database under a temp dir (migrated here); two evaluations of the same
--rows cases written straight to the database, one with a human label (pass/fail) and a
note on every row, one without; for each, summarize() timed (median of 3) and its
results page read through Django's test client (median of --requests). Printed: each
time, the difference, and the ratio against the evaluation without human columns.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=15)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="skynet-bench-agreement-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skynet_web.settings")
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", os.urandom(24).hex())

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rows:,} rows; temp dir {folder}")

    from django.contrib.auth.models import User
    from django.test import Client

    from evaluations.models import Evaluation, EvaluationCase
    from evaluations.summary import summarize
    from submissions.services import dataset_create

    owner = User.objects.create_user("bench", password="bench-password-1")
    dataset = dataset_create(owner=owner, filename="rows.csv", data=b"q,a\n1,2\n")
    rng = random.Random(0)
    scores = [float(rng.random() < 0.6) for _ in range(args.rows)]
    labels = [
        ("pass" if s else "fail") if rng.random() < 0.8 else ("fail" if s else "pass")
        for s in scores
    ]

    def make(human: bool) -> Evaluation:
        settings_ = {"label_column": "h", "note_column": "n", "classes": ["fail", "pass"]}
        evaluation = Evaluation.objects.create(
            owner=owner,
            dataset=dataset,
            source="def score(input, output, expected=None):\n    return 1.0, {}\n",
            total=args.rows,
            done=args.rows,
            status=Evaluation.Status.DONE,
            human={**settings_, "threshold": 0.5} if human else {},
        )
        EvaluationCase.objects.bulk_create(
            [
                EvaluationCase(
                    evaluation=evaluation,
                    index=i,
                    row=i,
                    file_row=i + 2,
                    status="valid",
                    score=scores[i],
                    feedback=f"feedback {i % 50}",
                    feedback_kind="specific",
                    case={"input": {"q": i}, "output": "a", "expected": None},
                    human={"label": labels[i], "note": f"note {i}"} if human else None,
                )
                for i in range(args.rows)
            ],
            batch_size=2000,
        )
        return evaluation

    def summary_s(evaluation: Evaluation) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            summary = summarize(evaluation)
            times.append(time.perf_counter() - started)
        Evaluation.objects.filter(pk=evaluation.pk).update(summary=summary)
        return statistics.median(times)

    client = Client()
    client.force_login(owner)

    def page_ms(evaluation: Evaluation) -> float:
        path = f"/en/evaluations/{evaluation.pk}/"
        assert client.get(path).status_code == 200
        times = []
        for _ in range(args.requests):
            started = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        return statistics.median(times)

    plain, judged = make(False), make(True)
    base_s, human_s = summary_s(plain), summary_s(judged)
    judged.refresh_from_db()
    assert judged.summary["human"]["compared"] == args.rows
    base_ms, human_ms = page_ms(plain), page_ms(judged)
    print(
        f"summary (worker, once): {base_s:.3f} s without human columns, {human_s:.3f} s "
        f"with them: +{human_s - base_s:.3f} s ({human_s / base_s:.2f}x)"
    )
    print(
        f"results page (median of {args.requests}): {base_ms:.1f} ms without, "
        f"{human_ms:.1f} ms with: +{human_ms - base_ms:.1f} ms ({human_ms / base_ms:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
