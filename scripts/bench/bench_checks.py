"""Contract check latency and throughput, page server time and the editor bundle's size.

Every number is measured in this one run and printed next to the floor it is compared with,
then next to scripts/bench/baseline.json as current/baseline. Nothing here asserts on a time: the
ratios are for a person to read (see scripts/bench/README.md).

    .venv/bin/python scripts/bench/bench_checks.py                  # measure, compare with baseline
    .venv/bin/python scripts/bench/bench_checks.py --save-baseline  # ... and write scripts/bench/baseline.json

It starts its own private stack under a temp dir: an embedded Redis on a unix socket, a
fresh SQLite database, and two Celery worker processes (--concurrency 1 each). Everything it
starts is stopped in a finally block, also on Ctrl+C (scripts/bench/bench_stack.py, shared with
scripts/bench/load_test.py and scripts/bench/bench_browser.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
import cpu_accounting  # noqa: E402 - this folder, found as the script's own
from bench_stack import ROOT, Stack, percentile, sigterm_as_interrupt  # noqa: E402

BASELINE = Path(__file__).resolve().parent / "baseline.json"
EDITOR_BUNDLE = ROOT / "static" / "editor" / "editor.js"
DOCS_PAGE = "/docs/en/concepts/scorers"

TRIVIAL_METRIC = """def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""

# A metric that imports one of the libraries a metric may import (sandbox.libraries),
# which every warm sandbox has loaded before it forks a case.
NUMPY_METRIC = """import numpy as np


def score(input, output, expected=None):
    want = expected["label"]
    letters = np.array([ord(c) for c in output.ljust(len(want))[: len(want)]])
    close = float(np.mean(letters == np.array([ord(c) for c in want])))
    return close, {"feedback": f"{close:.0%} of the letters of {want!r} match."}
"""

# The floor: the same sandbox interpreter, started bare, imports the metric and scores the
# three default cases in one process ({cases} is 3; 1 for the three-processes variant).
# {site} is where the libraries are staged for the sandbox ("" for none).
FLOOR_CODE = """import sys
sys.path.insert(0, {folder!r})
if {site!r}:
    sys.path.append({site!r})
from metric import score
for output, label in (("billing", "billing"), ("other", "bug"), ("account", "account"))[:{cases}]:
    score({{"question": "q"}}, output, {{"label": label}})
"""


# --- small helpers ------------------------------------------------------------------------


def git_state() -> dict:
    def run(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {
        "commit": run("rev-parse", "--short", "HEAD"),
        "dirty": bool(run("status", "--porcelain", "--untracked-files=no")),
    }


# --- the stack ----------------------------------------------------------------------------


# --- the measurements ---------------------------------------------------------------------


def wait_final(check_ids: list[int], timeout_s: float, interval_s: float) -> None:
    from checks.models import Check

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = Check.objects.filter(pk__in=check_ids).exclude(status__in=Check.FINAL).count()
        if not left:
            return
        time.sleep(interval_s)
    raise RuntimeError(f"{left} of {len(check_ids)} checks not final after {timeout_s:.0f} s")


def floor_once(python: str, folder: str, processes: int = 1, site: str = "") -> float:
    """One bare process scoring all three cases (the floor), or `processes` of them in a row,
    each scoring one case (the floor for a check's three children, no sandbox)."""
    code = FLOOR_CODE.format(folder=folder, cases=3 if processes == 1 else 1, site=site)
    started = time.perf_counter()
    for _ in range(processes):
        subprocess.run(
            [python, "-E", "-s", "-B", "-c", code],
            check=True,
            stdin=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
    return time.perf_counter() - started


def measure_latency(owner, runs: int, python: str, folder: str) -> dict:
    """One check at a time, each followed by one floor run, so drift hits both alike."""
    from checks.models import Check
    from checks.services import check_create

    total, queue, run, seen, floors, floors3 = [], [], [], [], [], []
    statuses: dict[str, int] = {}
    for _ in range(runs):
        floors.append(floor_once(python, folder))
        floors3.append(floor_once(python, folder, processes=3))
        started = time.perf_counter()
        check = check_create(owner=owner, source=TRIVIAL_METRIC, timeout_s=20)
        wait_final([check.pk], timeout_s=60, interval_s=0.005)
        seen.append(time.perf_counter() - started)
        check = Check.objects.get(pk=check.pk)
        statuses[check.status] = statuses.get(check.status, 0) + 1
        total.append((check.finished_at - check.created_at).total_seconds())
        queue.append((check.started_at - check.created_at).total_seconds())
        run.append((check.finished_at - check.started_at).total_seconds())
    return {
        "total": total,
        "queue": queue,
        "run": run,
        "seen": seen,
        "floor": floors,
        "floor3": floors3,
        "statuses": statuses,
    }


def burst_owners(count: int = 6) -> list:
    """The users a burst is spread over, round-robin: one user's checks run one at a
    time (checks.fair_share), so a burst of one user's measures one process, not the
    worker's throughput."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    return [users.get_or_create(username=f"bench-burst-{i}")[0] for i in range(count)]


def measure_throughput(owners: list, count: int) -> dict:
    from django.db.models import Max
    from django.utils import timezone

    from checks.models import Check
    from checks.services import check_create

    cpu_before = cpu_accounting.snapshot()
    started = timezone.now()
    ids = [
        check_create(owner=owners[i % len(owners)], source=TRIVIAL_METRIC, timeout_s=20).pk
        for i in range(count)
    ]
    enqueued = timezone.now()
    wait_final(ids, timeout_s=120, interval_s=0.05)
    cpu = cpu_accounting.spent(cpu_before, cpu_accounting.snapshot())
    rows = Check.objects.filter(pk__in=ids)
    last = rows.aggregate(last=Max("finished_at"))["last"]
    elapsed = (last - started).total_seconds()
    statuses: dict[str, int] = {}
    for status in rows.values_list("status", flat=True):
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "elapsed_s": elapsed,
        "enqueue_s": (enqueued - started).total_seconds(),
        "per_s": count / elapsed,
        "statuses": statuses,
        "cpu_ms_per_check": {kind: 1000 * seconds / count for kind, seconds in cpu.items()},
    }


def measure_pages(owner, metric, requests: int) -> dict:
    """The two pages alternate, request by request, so drift and neighbours hit both alike."""
    from django.test import Client

    client = Client()
    client.force_login(owner)
    pages = {"editor": f"/en/metrics/{metric.pk}/", "docs": DOCS_PAGE}
    out = {label: {"url": url, "times": [], "bytes": 0} for label, url in pages.items()}
    for url in pages.values():
        for _ in range(3):  # warm-up: template loading, translations, first queries
            client.get(url)
    for _ in range(requests):
        for label, url in pages.items():
            started = time.perf_counter()
            response = client.get(url)
            out[label]["times"].append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"GET {url} answered {response.status_code}")
            out[label]["bytes"] = len(response.content)
    return out


def measure_library_latency(owner, runs: int, python: str, folder: str, site: str) -> dict:
    """Checks of NUMPY_METRIC one at a time, each after one floor run of the same metric
    (a bare interpreter that imports numpy from the staged libraries and scores three
    times), so the ratio shows what the warm sandbox's numpy saves and costs."""
    from checks.models import Check
    from checks.services import check_create

    total, floors = [], []
    statuses: dict[str, int] = {}
    for _ in range(runs):
        floors.append(floor_once(python, folder, site=site))
        check = check_create(owner=owner, source=NUMPY_METRIC, timeout_s=20)
        wait_final([check.pk], timeout_s=60, interval_s=0.005)
        check = Check.objects.get(pk=check.pk)
        statuses[check.status] = statuses.get(check.status, 0) + 1
        total.append((check.finished_at - check.created_at).total_seconds())
    return {"total": total, "floor": floors, "statuses": statuses}


def measure_calls_in_one_sandbox(cases: int) -> dict:
    """Many cases of the trivial metric through one warm sandbox: calls per second, and
    the floor's per-call cost (one bare interpreter scoring `cases` times)."""
    from contract.cases import Case
    from contract.engine import run_check
    from contract.runner import OnDemand
    from contract.warm import WarmSandbox
    from jobs import sandbox_pool

    config = sandbox_pool.base_config()
    many = [Case({"question": "q"}, "billing", {"label": "billing"})] * cases

    class One(OnDemand):
        """A sandbox started before the clock starts, as a worker's pool has it."""

        def __init__(self) -> None:
            super().__init__(config)
            self.ready = WarmSandbox.start(config)

        def take(self) -> WarmSandbox:
            return self.ready

    source = One()
    started = time.perf_counter()
    result = run_check(TRIVIAL_METRIC, many, timeout_s=20, sandboxes=source)
    elapsed = time.perf_counter() - started
    valid = sum(case.status == "valid" for case in result.cases)
    return {"cases": cases, "valid": valid, "elapsed_s": elapsed, "per_s": cases / elapsed}


def idle_sandbox_memory() -> dict:
    """What one ready, idle warm sandbox holds in memory, made as the worker makes them
    (forked by a zygote where there can be one, else a bubblewrap of its own)."""
    import sandbox
    from contract.warm import WarmSandbox
    from contract.zygote import Zygote
    from jobs import sandbox_pool

    config = sandbox_pool.base_config()
    zygote = Zygote.start(config) if sandbox.zygote_possible(config) else None
    try:
        warm = WarmSandbox.from_zygote(zygote) if zygote else WarmSandbox.start(config)
        try:
            time.sleep(0.5)
            made = "forked by a zygote" if zygote else "a bubblewrap of its own"
            which = "the warm interpreter, 3 case processes forked ahead"
            if not zygote:
                which = "bwrap, its init, " + which
            return {**memory_of(sorted(warm.body.members())), "made_by": made, "which": which}
        finally:
            warm.close()
    finally:
        if zygote is not None:
            zygote.close()


def floor_per_call(python: str, folder: str, calls: int) -> float:
    """Seconds per score() call in one bare interpreter: (N calls - 0 calls) / N."""

    def run(count: int) -> float:
        code = (
            f"import sys\nsys.path.insert(0, {folder!r})\nfrom metric import score\n"
            f"for _ in range({count}):\n"
            "    score({'question': 'q'}, 'billing', {'label': 'billing'})\n"
        )
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run([python, "-E", "-s", "-B", "-c", code], check=True)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    return max(0.0, run(calls) - run(0)) / calls


def memory_of(pids: list[int]) -> dict:
    """Resident and proportional (shared pages split) memory of processes and all their
    descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    seen, stack = set(), list(pids)
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.add(pid)
            stack += children.get(pid, [])
    rss = pss = 0
    for pid in seen:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return {"processes": len(seen), "rss": rss, "pss": pss}


def bundle_size() -> dict:
    data = EDITOR_BUNDLE.read_bytes()
    return {"raw": len(data), "gzip": len(gzip.compress(data, compresslevel=9, mtime=0))}


# --- reporting ----------------------------------------------------------------------------

# name -> (unit, better): better is "lower" or "higher"
NUMBERS = {
    "check_latency_p50_ms": ("ms", "lower"),
    "check_latency_p95_ms": ("ms", "lower"),
    "check_queue_wait_p50_ms": ("ms", "lower"),
    "check_run_p50_ms": ("ms", "lower"),
    "floor_p50_ms": ("ms", "lower"),
    "check_over_floor_p50": ("x", "lower"),
    "numpy_check_p50_ms": ("ms", "lower"),
    "numpy_floor_p50_ms": ("ms", "lower"),
    "numpy_check_over_floor_p50": ("x", "lower"),
    "floor_3_processes_p50_ms": ("ms", "lower"),
    "throughput_checks_per_s": ("1/s", "higher"),
    "calls_in_one_sandbox_per_s": ("1/s", "higher"),
    "idle_sandbox_pss_mib": ("MiB", "lower"),
    "worker_with_pool_pss_mib": ("MiB", "lower"),
    "editor_page_p50_ms": ("ms", "lower"),
    "docs_page_p50_ms": ("ms", "lower"),
    "editor_over_docs_p50": ("x", "lower"),
    "editor_js_gzip_bytes": ("B", "lower"),
    "editor_js_raw_bytes": ("B", "lower"),
}


def compare(numbers: dict, baseline: dict | None) -> None:
    print()
    if baseline is None:
        print(
            f"No baseline at {BASELINE.relative_to(ROOT)}; run with --save-baseline to write one."
        )
        return
    meta = baseline.get("meta", {})
    print(
        f"Against the baseline of {meta.get('date', '?')} (commit {meta.get('commit', '?')}"
        f"{', dirty' if meta.get('dirty') else ''}, {meta.get('cpus', '?')} CPUs):"
    )
    print(f"  {'number':<26} {'unit':>4} {'current':>10} {'baseline':>10} {'cur/base':>9}  better")
    old = baseline.get("numbers", {})
    for name, (unit, better) in NUMBERS.items():
        if name not in numbers:
            continue
        now = numbers[name]
        was = old.get(name)
        ratio = f"{now / was:9.2f}" if was else f"{'-':>9}"
        was_text = f"{was:10.1f}" if was is not None else f"{'-':>10}"
        print(f"  {name:<26} {unit:>4} {now:10.1f} {was_text} {ratio}  {better}")


def throughput_rounds(rounds: int, burst: int, keep: bool) -> int:
    """The throughput burst alone, `rounds` times on one stack, pools refilled in between:
    CPU per check by kind for each round, then the medians (steadier than one burst)."""
    print(f"bench_checks: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    with Stack(workers=2, keep=keep):
        from django.contrib.auth import get_user_model

        from checks.services import check_create

        owner = get_user_model().objects.create_user(username="bench", password=None)
        warm = [check_create(owner=owner, source=TRIVIAL_METRIC, timeout_s=20).pk for _ in range(4)]
        wait_final(warm, timeout_s=60, interval_s=0.02)
        results = []
        for index in range(rounds):
            time.sleep(3)  # the pools refill, off the clock
            result = measure_throughput(burst_owners(), burst)
            results.append(result)
            shares = result["cpu_ms_per_check"]
            print(
                f"  round {index + 1}: {result['per_s']:6.2f} checks/s, CPU/check "
                f"{shares['machine']:5.1f} ms: "
                + ", ".join(f"{k} {v:.1f}" for k, v in shares.items() if k != "machine")
                + f"  {result['statuses']}"
            )
    kinds = results[0]["cpu_ms_per_check"].keys()
    medians = {
        k: statistics.median(r["cpu_ms_per_check"].get(k, 0.0) for r in results) for k in kinds
    }
    print(
        f"median of {rounds} bursts of {burst}: "
        f"{statistics.median(r['per_s'] for r in results):.2f} checks/s, CPU/check "
        f"{medians['machine']:.1f} ms: "
        + ", ".join(f"{k} {v:.1f}" for k, v in medians.items() if k != "machine")
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=30, help="checks for latency (one at a time)")
    parser.add_argument("--burst", type=int, default=60, help="checks enqueued at once")
    parser.add_argument("--requests", type=int, default=50, help="requests per page timed")
    parser.add_argument("--calls", type=int, default=200, help="cases through one sandbox")
    parser.add_argument("--save-baseline", action="store_true", help=f"write {BASELINE}")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (db, logs)")
    parser.add_argument(
        "--throughput-only",
        type=int,
        metavar="ROUNDS",
        default=0,
        help="only the throughput burst, ROUNDS times on one stack; print each and the medians",
    )
    args = parser.parse_args()
    sigterm_as_interrupt()
    if args.throughput_only:
        return throughput_rounds(args.throughput_only, args.burst, args.keep)
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    print(
        f"bench_checks: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average before start {load_before:.2f} (other work skews every number)"
    )
    stack = Stack(workers=2, keep=args.keep)
    floor_dir = None
    try:
        stack.start()
        print(f"stack up in {time.monotonic() - began:.1f} s (Redis, SQLite, 2 Celery workers)")
        for name, status in sorted(stack.sandbox_status().items()):
            print(f"  {name}: sandbox {status['mode']}, layers {', '.join(status['layers'])}")

        from django.contrib.auth import get_user_model

        from checks.services import check_create
        from jobs import sandbox_pool
        from metrics.services import metric_create

        owner = get_user_model().objects.create_user(username="bench", password=None)
        metric = metric_create(owner=owner, name="bench", starter="exact_match")
        python = sandbox_pool.base_config().python
        site = sandbox_pool.base_config().site_packages or ""
        floor_dir = tempfile.mkdtemp(prefix="skynet-floor-", dir="/tmp")
        (Path(floor_dir) / "metric.py").write_text(TRIVIAL_METRIC)
        numpy_dir = os.path.join(floor_dir, "numpy-metric")
        os.mkdir(numpy_dir)
        (Path(numpy_dir) / "metric.py").write_text(NUMPY_METRIC)

        # Warm-up, not measured: each worker's first check, first floor run.
        warm = [check_create(owner=owner, source=TRIVIAL_METRIC, timeout_s=20).pk for _ in range(4)]
        wait_final(warm, timeout_s=60, interval_s=0.02)
        floor_once(python, floor_dir)
        time.sleep(3)  # the workers' pools refill after the warm-up, in the background

        # Pages first: after a burst the pools refill in the background for a while.
        pages = measure_pages(owner, metric, args.requests)
        latency = measure_latency(owner, args.checks, python, floor_dir)
        library = measure_library_latency(owner, args.checks, python, numpy_dir, site)
        burst = measure_throughput(burst_owners(), args.burst)
        time.sleep(2)  # let the pools refill before they are weighed
        workers = {
            name: memory_of([process.pid])
            for name, process in stack.processes()
            if name.startswith("worker")
        }
        calls = measure_calls_in_one_sandbox(args.calls)
        per_call_floor = floor_per_call(python, floor_dir, 1000)
        idle = idle_sandbox_memory()
        bundle = bundle_size()
    finally:
        stack.stop()
        if floor_dir:
            shutil.rmtree(floor_dir, ignore_errors=True)

    ms = 1000
    check_p50 = percentile(latency["total"], 50) * ms
    floor_p50 = percentile(latency["floor"], 50) * ms
    numbers = {
        "check_latency_p50_ms": check_p50,
        "check_latency_p95_ms": percentile(latency["total"], 95) * ms,
        "check_queue_wait_p50_ms": percentile(latency["queue"], 50) * ms,
        "check_run_p50_ms": percentile(latency["run"], 50) * ms,
        "floor_p50_ms": floor_p50,
        "check_over_floor_p50": check_p50 / floor_p50,
        "floor_3_processes_p50_ms": percentile(latency["floor3"], 50) * ms,
        "numpy_check_p50_ms": percentile(library["total"], 50) * ms,
        "numpy_floor_p50_ms": percentile(library["floor"], 50) * ms,
        "numpy_check_over_floor_p50": percentile(library["total"], 50)
        / percentile(library["floor"], 50),
        "throughput_checks_per_s": burst["per_s"],
        "calls_in_one_sandbox_per_s": calls["per_s"],
        "idle_sandbox_pss_mib": idle["pss"] / (1 << 20),
        "worker_with_pool_pss_mib": statistics.mean(w["pss"] for w in workers.values()) / (1 << 20),
        "editor_page_p50_ms": statistics.median(pages["editor"]["times"]) * ms,
        "docs_page_p50_ms": statistics.median(pages["docs"]["times"]) * ms,
        "editor_over_docs_p50": statistics.median(pages["editor"]["times"])
        / statistics.median(pages["docs"]["times"]),
        "editor_js_gzip_bytes": float(bundle["gzip"]),
        "editor_js_raw_bytes": float(bundle["raw"]),
    }

    def line(label: str, values: list[float], extra: str = "") -> None:
        p50, p95 = percentile(values, 50) * ms, percentile(values, 95) * ms
        print(f"  {label:<30} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   {extra}".rstrip())

    print()
    print(f"Contract check, trivial metric, {args.checks} checks one at a time, 2 workers")
    line("enqueue -> final in DB", latency["total"], f"statuses {latency['statuses']}")
    line("  queue (created -> started)", latency["queue"])
    line("  run (started -> finished)", latency["run"])
    line("seen by a 5 ms poller", latency["seen"])
    print(f"  floor: bare {python} -E -s -B -c 'import metric; score() x3'")
    line("floor", latency["floor"])
    print(f"  check / floor (p50)            {numbers['check_over_floor_p50']:.1f} x")
    print("  for scale, a check's 3 children unsandboxed: 3 bare processes, one case each")
    floor3 = numbers["floor_3_processes_p50_ms"]
    line("3 bare processes", latency["floor3"], f"check / this {check_p50 / floor3:.1f} x")
    print()
    print(f"Contract check, a metric that imports numpy, {args.checks} checks one at a time")
    line("enqueue -> final in DB", library["total"], f"statuses {library['statuses']}")
    print("  floor: the same metric in a bare interpreter, numpy imported from the stage")
    line("floor", library["floor"])
    print(f"  check / floor (p50)            {numbers['numpy_check_over_floor_p50']:.2f} x")
    print()
    print(f"Throughput: {args.burst} checks enqueued at once, 2 workers")
    print(
        f"  {burst['per_s']:.2f} checks/s: {burst['elapsed_s']:.2f} s to the last final "
        f"(enqueueing took {burst['enqueue_s'] * ms:.0f} ms), statuses {burst['statuses']}"
    )
    print(
        f"  {burst['elapsed_s'] / args.burst * ms:.0f} ms of wall time per check, "
        f"vs {check_p50:.0f} ms latency one at a time"
    )
    shares = burst["cpu_ms_per_check"]
    print(
        f"  CPU per check: {shares['machine']:.1f} ms in all, of which "
        + ", ".join(f"{kind} {value:.1f}" for kind, value in shares.items() if kind != "machine")
    )
    print()
    print(f"Metric calls through one warm sandbox: {calls['cases']} cases of the trivial metric")
    print(
        f"  {calls['per_s']:.0f} calls/s ({calls['elapsed_s'] / calls['cases'] * ms:.2f} ms a "
        f"call, a fresh process each), {calls['valid']} valid; the floor scores one in "
        f"{per_call_floor * 1e6:.1f} us, in one bare interpreter"
    )
    print()
    print("Memory (RSS counts shared pages in every process; PSS splits them)")
    print(
        f"  an idle warm sandbox ({idle['made_by']}): {idle['processes']} processes "
        f"({idle['which']}), RSS {idle['rss'] / (1 << 20):.1f} MiB, "
        f"PSS {idle['pss'] / (1 << 20):.1f} MiB"
    )
    for name, used in sorted(workers.items()):
        print(
            f"  {name} with its pool: {used['processes']} processes, RSS "
            f"{used['rss'] / (1 << 20):.1f} MiB, PSS {used['pss'] / (1 << 20):.1f} MiB"
        )
    print()
    print(f"Server time, in-process test Client (DEBUG=0), {args.requests} requests each")
    for label in ("editor", "docs"):
        page = pages[label]
        line(f"{label} {page['url']}", page["times"], f"{page['bytes'] / 1024:.0f} KiB")
    print(f"  editor / docs (p50)            {numbers['editor_over_docs_p50']:.1f} x")
    print()
    print(
        f"Editor bundle {EDITOR_BUNDLE.relative_to(ROOT)}: {bundle['raw'] / 1024:.0f} KiB raw, "
        f"{bundle['gzip'] / 1024:.1f} KiB gzip -9"
    )

    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    compare(numbers, baseline)
    if args.save_baseline:
        BASELINE.parent.mkdir(exist_ok=True)
        record = {
            "meta": {
                "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                **git_state(),
                "cpus": os.cpu_count(),
                "load_average_before": round(load_before, 2),
                "python": platform.python_version(),
                "sandbox_python": python,
                "checks": args.checks,
                "burst": args.burst,
                "requests": args.requests,
            },
            "numbers": {name: round(value, 3) for name, value in numbers.items()},
        }
        BASELINE.write_text(json.dumps(record, indent=2) + "\n")
        print(f"\nwrote {BASELINE.relative_to(ROOT)}")
    print(f"\ntotal run time {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        sys.exit(130)
