#!/usr/bin/env python3
"""Evaluations: cases per second end to end against the warm sandbox's bare rate, and a
200,000-row evaluation's memory and results page against a 200-case one's, in one run.

    .venv/bin/python scripts/bench_evaluation.py [--cases 10000] [--big 200000]

Everything runs on a private stack (scripts/bench_stack.py: embedded Redis, a fresh
SQLite database, one Celery worker, gunicorn). Printed as ratios against baselines
measured in the same run, so a busy machine moves both sides:
- throughput: a trivial metric over --cases cases, from the Evaluate click (the row
  created and enqueued) to the row "done", next to the same number of cases scored by
  one warm sandbox in this process (contract.evaluation.evaluate with no database, no
  broker: the sandbox's bare rate);
- memory: the worker's pool process and the web processes' peak resident memory
  (VmHWM) after the --big evaluation and its pages, next to the same after the small one;
- the results page, the case table's first and a deep page and the CSV's first bytes of
  the --big evaluation, each against the 200-case evaluation's (median of 15 requests).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stack import Stack

TRIVIAL_METRIC = """def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct label."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""
LABELS = ("billing", "bug", "account", "other")


def dataset_of(owner, rows: int):
    """A CSV dataset of `rows` rows (question, label, recorded output), uploaded as the
    site's upload does it."""
    from submissions.services import dataset_create

    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "label", "output"])
    for i in range(rows):
        out.writerow([f"question {i}", LABELS[i % 4], LABELS[(i * 7) % 4]])
    return dataset_create(owner=owner, filename=f"bench-{rows}.csv", data=text.getvalue().encode())


def evaluate_in_worker(owner, dataset, metric_version, timeout_s: float) -> tuple[int, float]:
    from evaluations.models import Evaluation
    from evaluations.selection import default_selection
    from evaluations.services import evaluation_create

    started = time.perf_counter()
    evaluation = evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles={"question": "input", "label": "output"},
        recorded_column="output",
        total=dataset.row_count,
        source=metric_version.source,
        metric_version=metric_version,
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = Evaluation.objects.filter(pk=evaluation.pk).values_list("status", flat=True)[0]
        if status in Evaluation.FINAL:
            break
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    evaluation.refresh_from_db()
    if evaluation.status != Evaluation.Status.DONE or evaluation.done != dataset.row_count:
        raise RuntimeError(
            f"evaluation {evaluation.pk}: {evaluation.status} {evaluation.failure} "
            f"{evaluation.done}/{dataset.row_count}"
        )
    return evaluation.pk, elapsed


def bare_rate(cases: int) -> float:
    """Cases a second through one warm sandbox started before the clock, in this process:
    the same window, no database, no broker."""
    from django.conf import settings

    from checks import sandbox_pool
    from contract.cases import Case
    from contract.evaluation import evaluate
    from contract.runner import OnDemand
    from contract.warm import WarmSandbox

    config = sandbox_pool.base_config()

    class One(OnDemand):
        def __init__(self) -> None:
            super().__init__(config)
            self.ready = WarmSandbox.start(config)

        def take(self) -> WarmSandbox:
            return self.ready

    source = One()
    many = (
        Case({"question": f"q{i}"}, LABELS[i % 4], {"label": LABELS[(i * 7) % 4]})
        for i in range(cases)
    )
    scored = 0

    def count(_) -> None:
        nonlocal scored
        scored += 1

    started = time.perf_counter()
    evaluate(
        TRIVIAL_METRIC,
        many,
        on_scored=count,
        sandboxes=source,
        timeout_s=20,
        window=settings.EVALUATION_WINDOW,
    )
    elapsed = time.perf_counter() - started
    assert scored == cases, scored
    return cases / elapsed


def peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pool_children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def page_times(client, urls: list[str], requests: int) -> dict[str, float]:
    out = {}
    for url in urls:
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            with client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"{url}: {response.status_code}")
                # A download is streamed: its first bytes are what the reader waits for.
                next(response.iter_bytes(), b"")
                times.append(time.perf_counter() - started)
                # The rest of a download is not waited for (its whole is timed once).
        out[url] = statistics.median(times)
    return out


def logged_in_client(stack, owner_name: str):
    import httpx
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    owner = get_user_model().objects.get(username=owner_name)
    session = Client()
    session.force_login(owner)
    cookie = session.cookies[settings.SESSION_COOKIE_NAME].value
    return httpx.Client(
        base_url=stack.base_url,
        cookies={settings.SESSION_COOKIE_NAME: cookie},
        trust_env=False,
        timeout=120,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=200_000)
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print(
        f"bench_evaluation: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    stack = Stack(
        workers=1,
        gunicorn_workers=1,
        keep=args.keep,
        extra_env={"SKYNET_EVALUATION_MAX_ACTIVE": "5", "SKYNET_EVALUATION_RATE_PER_MINUTE": "60"},
    )
    try:
        stack.start()
        from django.contrib.auth import get_user_model
        from django.urls import reverse

        from metrics.services import metric_create

        owner = get_user_model().objects.create_user(username="bench", password=None)
        metric = metric_create(owner=owner, name="bench", starter="exact_match")
        version = metric.latest_version
        version.source = TRIVIAL_METRIC
        version.save()

        warm = dataset_of(owner, 50)
        evaluate_in_worker(owner, warm, version, 120)  # the worker's first: not measured

        rate_bare = bare_rate(args.cases)
        throughput = dataset_of(owner, args.cases)
        _, elapsed = evaluate_in_worker(owner, throughput, version, 1800)
        rate = args.cases / elapsed
        print(f"\nthroughput, {args.cases} cases of a trivial metric on {os.cpu_count()} cores:")
        print(f"  end to end (click to done): {rate:7.0f} cases/s ({elapsed:.1f} s)")
        print(f"  one warm sandbox, bare:     {rate_bare:7.0f} cases/s")
        print(f"  ratio end to end / bare:    {rate / rate_bare:7.2f}")

        (worker,) = [p for name, p in stack.processes() if name.startswith("worker")]
        (web,) = [p for name, p in stack.processes() if name == "gunicorn"]

        def memory() -> dict[str, float]:
            pool = pool_children(worker.pid)
            return {
                "worker pool process": max(peak_rss_mib(pid) for pid in pool),
                "web worker": max(peak_rss_mib(pid) for pid in pool_children(web.pid)),
            }

        client = logged_in_client(stack, "bench")
        small_pk, _ = evaluate_in_worker(owner, dataset_of(owner, args.small), version, 600)

        def urls(pk: int, deep: int) -> list[str]:
            return [
                reverse("evaluations:detail", args=[pk]),
                reverse("evaluations:cases", args=[pk]),
                reverse("evaluations:cases", args=[pk]) + f"?page={deep}&sort=-score",
                reverse("evaluations:download", args=[pk, "csv"]),
            ]

        small_urls = urls(small_pk, 2)
        page_times(client, small_urls, 2)
        small = page_times(client, small_urls, args.requests)
        before = memory()
        big_started = time.perf_counter()
        big_pk, big_elapsed = evaluate_in_worker(owner, dataset_of(owner, args.big), version, 7200)
        print(
            f"\n{args.big} cases evaluated in {big_elapsed:.0f} s "
            f"({args.big / big_elapsed:.0f} cases/s; dataset made and stored in "
            f"{time.perf_counter() - big_started - big_elapsed:.0f} s more)"
        )
        big_urls = urls(big_pk, args.big // 50 // 2)
        page_times(client, big_urls, 2)
        big = page_times(client, big_urls, args.requests)
        after = memory()
        started = time.perf_counter()
        with client.stream("GET", big_urls[3]) as response:
            size = sum(len(chunk) for chunk in response.iter_bytes())
        download_s = time.perf_counter() - started
        print(
            f"\nresults pages, {args.big} cases against {args.small} (median of {args.requests}):"
        )
        names = [
            "results page",
            "case table, page 1",
            "case table, deep page by score",
            "CSV, first bytes",
        ]
        for name, small_url, big_url in zip(names, small_urls, big_urls, strict=True):
            print(
                f"  {name:32s} {small[small_url] * 1000:7.1f} ms -> {big[big_url] * 1000:7.1f} ms"
                f"   ratio {big[big_url] / small[small_url]:5.2f}"
            )
        print(
            f"  the whole CSV of {args.big} cases: {size / 1e6:.1f} MB in {download_s:.1f} s "
            f"({args.big / download_s:.0f} rows/s)"
        )
        print(
            f"\npeak resident memory (VmHWM), after the {args.cases} and {args.small}-case "
            f"evaluations -> after the {args.big}-case one and its pages:"
        )
        for name in before:
            print(
                f"  {name:20s} {before[name]:7.1f} MiB -> {after[name]:7.1f} MiB"
                f"   ratio {after[name] / before[name]:5.2f}"
            )
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
