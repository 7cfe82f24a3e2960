#!/usr/bin/env python3
"""Evaluations: cases per second end to end against the warm sandbox's bare rate, and a
200,000-row evaluation's memory and results page against a 200-case one's, in one run.

    .venv/bin/python scripts/bench/bench_evaluation.py [--cases 10000] [--big 200000]
    .venv/bin/python scripts/bench/bench_evaluation.py --metric f1 --cases 3000 --big 0

Everything runs on a private stack (scripts/bench/bench_stack.py: embedded Redis, a fresh
SQLite database, one Celery worker, gunicorn). Printed as ratios against baselines
measured in the same run, so a busy machine moves both sides:
- throughput: --metric (a trivial one, or "f1": token F1 with collections.Counter and a
  specific feedback, as a real metric is) over --cases cases, from the Evaluate click
  (the row created and enqueued) to the results on screen: the script follows the
  evaluation's page through gunicorn as the browser does (its live panel's hx-get and
  hx-trigger, each answer read whole) until an answer holds the results, and also reads
  the row's own created -> finished. Next to it, the same cases scored by one warm
  sandbox in this process (contract.evaluation.evaluate with no database, no broker: the
  sandbox's bare rate), measured just before;
- memory: the worker's pool process and the web processes' peak resident memory
  (VmHWM) after the --big evaluation and its pages, next to the same after the small one;
- the results page, the case table's first and a deep page and the CSV's first bytes of
  the --big evaluation, each against the 200-case evaluation's (median of 15 requests);
  --big 0 leaves this part out.
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import os
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cpu_accounting
from bench_stack import Stack

TRIVIAL_METRIC = """def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct label."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""
LABELS = ("billing", "bug", "account", "other")

# What a real metric does per case: tokenize both texts, count the overlap, and say
# what is missing and what is extra.
F1_METRIC = """import re
from collections import Counter

WORD = re.compile(r"[a-z0-9]+")


def tokens(text):
    return WORD.findall(str(text or "").lower())


def score(input, output, expected=None):
    want = tokens(expected["answer"])
    got = tokens(output)
    if not got:
        start = " ".join(want[:5])
        return 0.0, {"feedback": f"The answer is empty; the expected one starts {start!r}."}
    common = Counter(got) & Counter(want)
    same = sum(common.values())
    if not same:
        start = " ".join(want[:5])
        return 0.0, {"feedback": f"No word of the expected answer appears; it starts {start!r}."}
    precision = same / len(got)
    recall = same / len(want)
    f1 = 2 * precision * recall / (precision + recall)
    parts = [f"Token F1 {f1:.2f} (precision {precision:.2f}, recall {recall:.2f})."]
    missing = list(Counter(want) - Counter(got))[:5]
    extra = list(Counter(got) - Counter(want))[:5]
    if missing:
        parts.append("Missing: " + ", ".join(missing) + ".")
    if extra:
        parts.append("Not expected: " + ", ".join(extra) + ".")
    return f1, {"feedback": " ".join(parts)}
"""
WORDS = (
    "the invoice was charged twice this month because the card on file expired and "
    "support refunded one payment after the customer opened a ticket about an error "
    "in the billing page settings export account password reset login email address "
    "shipping order delivery late missing package tracking number warehouse label "
    "printer crash update version mobile app desktop browser cache cookie session"
).split()


class Metric:
    """A metric of the benchmark, its dataset's columns and rows, and its cases."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "f1":
            self.source = F1_METRIC
            self.columns = ["question", "answer", "output"]
            self.roles = {"question": "input", "answer": "output"}
            self.title = "a token-F1 metric"
        else:
            self.source = TRIVIAL_METRIC
            self.columns = ["question", "label", "output"]
            self.roles = {"question": "input", "label": "output"}
            self.title = "a trivial metric"

    def rows(self, count: int) -> list[tuple[str, str, str]]:
        """(input, expected, recorded output) of each row, the same every run."""
        if self.name != "f1":
            return [(f"question {i}", LABELS[i % 4], LABELS[(i * 7) % 4]) for i in range(count)]
        rng = random.Random(count)
        out = []
        for i in range(count):
            answer = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
            given = [word for word in answer if rng.random() > 0.25]
            given += [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
            if i % 50 == 7:
                given = []
            out.append(
                (f"question {i}: " + " ".join(answer[:4]), " ".join(answer), " ".join(given))
            )
        return out

    def cases(self, count: int):
        from contract.cases import Case

        key = self.columns[1]
        for question, expected, output in self.rows(count):
            yield Case({"question": question}, output, {key: expected})


def dataset_of(owner, rows: int, metric: Metric | None = None):
    """A CSV dataset of `rows` rows (question, expected, recorded output), uploaded as the
    site's upload does it."""
    from submissions.services import dataset_create

    metric = metric or Metric("trivial")
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(metric.columns)
    out.writerows(metric.rows(rows))
    return dataset_create(owner=owner, filename=f"bench-{rows}.csv", data=text.getvalue().encode())


def click(owner, dataset, metric_version, roles: dict | None = None):
    """What the Evaluate button does once its form is valid: the row, and the task sent."""
    from evaluations.selection import default_selection
    from evaluations.services import evaluation_create

    return evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=default_selection(),
        roles=roles or {"question": "input", "label": "output"},
        recorded_column="output",
        total=dataset.row_count,
        source=metric_version.source,
        metric_version=metric_version,
    )


def evaluate_in_worker(owner, dataset, metric_version, timeout_s: float) -> tuple[int, float]:
    from evaluations.models import Evaluation

    started = time.perf_counter()
    evaluation = click(owner, dataset, metric_version)
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


LIVE_PANEL = re.compile(r'<section id="evaluation-live"[^>]*>')
ATTRIBUTE = re.compile(r'(hx-get|hx-trigger)="([^"]*)"')


def follow_page(client, pk: int, timeout_s: float) -> tuple[float, int]:
    """As the browser does after the click: load the evaluation's page, then ask for its
    live panel as the panel says (its hx-get, after its hx-trigger's delay) until an
    answer holds the results; an answer that asks for a reload (HX-Refresh) is followed
    by the page. The clock stops once the results are read whole. (time.perf_counter()
    at that moment, the number of requests)."""
    from django.urls import reverse

    detail = reverse("evaluations:detail", args=[pk])
    deadline = time.monotonic() + timeout_s
    body = client.get(detail).text
    requests = 1
    while time.monotonic() < deadline:
        panel = LIVE_PANEL.search(body)
        if panel is None:
            if 'id="evaluation-final"' not in body:
                raise RuntimeError(f"evaluation {pk}: neither the live panel nor the results")
            return time.perf_counter(), requests
        attributes = dict(ATTRIBUTE.findall(panel.group(0)))
        delay = re.search(r"delay:(\d+)ms", attributes.get("hx-trigger", ""))
        if delay:
            time.sleep(int(delay.group(1)) / 1000)
        response = client.get(html.unescape(attributes["hx-get"]), headers={"HX-Request": "true"})
        requests += 1
        if response.status_code not in (200, 286):
            raise RuntimeError(f"evaluation {pk}: the live panel answered {response.status_code}")
        body = response.text
        if response.headers.get("HX-Refresh") == "true":
            body = client.get(detail).text
            requests += 1
    raise RuntimeError(f"evaluation {pk}: no results on the page after {timeout_s:.0f} s")


def evaluate_from_click(client, owner, dataset, metric_version, roles: dict, timeout_s: float):
    """Seconds from the click to the results on screen, and from the click to the row
    final (its created_at -> finished_at, no poll in it); the requests the page made."""
    from evaluations.models import Evaluation

    cpu_before = cpu_accounting.snapshot()
    started = time.perf_counter()
    evaluation = click(owner, dataset, metric_version, roles)
    on_screen, requests = follow_page(client, evaluation.pk, timeout_s)
    cpu = cpu_accounting.spent(cpu_before, cpu_accounting.snapshot())
    evaluation.refresh_from_db()
    if evaluation.status != Evaluation.Status.DONE or evaluation.done != dataset.row_count:
        raise RuntimeError(
            f"evaluation {evaluation.pk}: {evaluation.status} {evaluation.failure} "
            f"{evaluation.done}/{dataset.row_count}"
        )
    in_row = (evaluation.finished_at - evaluation.created_at).total_seconds()
    return {
        "pk": evaluation.pk,
        "on_screen_s": on_screen - started,
        "row_final_s": in_row,
        "run_s": (evaluation.finished_at - evaluation.started_at).total_seconds(),
        "requests": requests,
        "cpu": cpu,
    }


def bare_rate(cases: int, metric: Metric | None = None) -> tuple[float, dict]:
    """Cases a second through one warm sandbox started before the clock, in this process:
    the same window, no database, no broker."""
    from django.conf import settings

    from contract.evaluation import evaluate
    from contract.runner import OnDemand
    from contract.warm import WarmSandbox
    from jobs import sandbox_pool

    config = sandbox_pool.base_config()

    class One(OnDemand):
        def __init__(self) -> None:
            super().__init__(config)
            self.ready = WarmSandbox.start(config)

        def take(self) -> WarmSandbox:
            return self.ready

    metric = metric or Metric("trivial")
    source = One()
    many = metric.cases(cases)
    scored = 0

    def count(_) -> None:
        nonlocal scored
        scored += 1

    cpu_before = cpu_accounting.snapshot()
    started = time.perf_counter()
    evaluate(
        metric.source,
        many,
        on_scored=count,
        sandboxes=source,
        timeout_s=20,
        window=settings.EVALUATION_WINDOW,
    )
    elapsed = time.perf_counter() - started
    cpu = cpu_accounting.spent(cpu_before, cpu_accounting.snapshot())
    source.ready.close()
    assert scored == cases, scored
    return cases / elapsed, cpu


def cpu_text(cpu: dict, cases: int) -> str:
    """CPU per case by kind of process, in ms."""
    parts = [f"{kind} {1000 * seconds / cases:.2f}" for kind, seconds in cpu.items()]
    return ", ".join(part for part in parts if not part.startswith("machine"))


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
    parser.add_argument(
        "--metric", choices=("trivial", "f1"), default="trivial", help="the metric timed"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="bare rate and evaluation, alternated this often"
    )
    parser.add_argument("--big", type=int, default=200_000, help="0: no big evaluation")
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

        from metrics.services import metric_create, metric_save

        owner = get_user_model().objects.create_user(username="bench", password=None)
        metric = metric_create(owner=owner, name="bench", starter="exact_match")
        version = metric.latest_version
        version.source = TRIVIAL_METRIC
        version.save()
        timed = Metric(args.metric)
        timed_version = version
        if timed.name != "trivial":
            timed_version, _ = metric_save(metric, source=timed.source)
        client = logged_in_client(stack, "bench")

        warm = dataset_of(owner, 50, timed)
        # The worker's first evaluation and the page's first answers: not measured.
        evaluate_from_click(client, owner, warm, timed_version, timed.roles, 120)

        throughput = dataset_of(owner, args.cases, timed)
        print(
            f"\nthroughput, {args.cases} cases of {timed.title} on {os.cpu_count()} cores "
            f"(load average {os.getloadavg()[0]:.2f}):"
        )
        ratios = []
        for round_number in range(1, args.rounds + 1):
            rate_bare, bare_cpu = bare_rate(args.cases, timed)
            measured = evaluate_from_click(
                client, owner, throughput, timed_version, timed.roles, 1800
            )
            rate = args.cases / measured["on_screen_s"]
            ratios.append(rate / rate_bare)
            if args.rounds > 1:
                print(f"  round {round_number}:")
            print(
                f"  click to results on screen: {rate:7.0f} cases/s "
                f"({measured['on_screen_s']:.2f} s, {measured['requests']} requests of the page)"
            )
            print(
                f"  click to the row final:     {args.cases / measured['row_final_s']:7.0f} cases/s "
                f"({measured['row_final_s']:.2f} s; its run {measured['run_s']:.2f} s)"
            )
            print(f"  one warm sandbox, bare:     {rate_bare:7.0f} cases/s")
            print(f"  ratio on screen / bare:     {rate / rate_bare:7.2f}")
            print(
                f"  CPU per case, ms, evaluation: {1000 * measured['cpu']['machine'] / args.cases:.2f}"
                f" ({cpu_text(measured['cpu'], args.cases)})"
            )
            print(
                f"  CPU per case, ms, bare:       {1000 * bare_cpu['machine'] / args.cases:.2f}"
                f" ({cpu_text(bare_cpu, args.cases)})"
            )
        if args.rounds > 1:
            print(f"  median ratio of {args.rounds} rounds: {statistics.median(ratios):.2f}")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
        if args.big <= 0:
            return 0

        (worker,) = [p for name, p in stack.processes() if name.startswith("worker")]
        (web,) = [p for name, p in stack.processes() if name == "gunicorn"]

        def memory() -> dict[str, float]:
            pool = pool_children(worker.pid)
            return {
                "worker pool process": max(peak_rss_mib(pid) for pid in pool),
                "web worker": max(peak_rss_mib(pid) for pid in pool_children(web.pid)),
            }

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
