"""Load test: simulated users log in, open their metric, save edits and run checks.

    .venv/bin/python scripts/bench/load_test.py                    # 50 users for 60 s
    .venv/bin/python scripts/bench/load_test.py --users 10 --seconds 20

It starts its own private stack (see scripts/bench/bench_checks.py): an embedded Redis, a fresh
SQLite database, two Celery worker processes and gunicorn (4 workers of 8 threads) on
127.0.0.1, and stops all of it at the end, also on Ctrl+C. Only 127.0.0.1 is ever requested.

Each user (its own httpx client and cookies) logs in through the form, then loops until the
time is up: GET the playground, save an edit (htmx), run the check (htmx), and follow the
check panel as the page does (a request the server holds until the check changes, or a
poll every --poll seconds for an old check), until it answers 286 (final). Users start spread
over --ramp seconds and think --think seconds (+-50 %) between actions. A check in flight
when the time is up is still polled to its end (at most --drain seconds more).

Per-user check limits are raised through the environment so the load is not refused; with
--app-limits they stay at the app's defaults and refusals (429) are counted apart from
errors. An error is a transport failure or any status other than the one expected.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stack import Stack, percentile, sigterm_as_interrupt

PASSWORD = "load-test-password-1"
PANEL = re.compile(r'hx-get="(/en/checks/(\d+)/\?partial=panel[^"]*)"\s+hx-trigger="([^"]*)"')
MAX_ITERATIONS = 10_000  # per user; the clock ends the loop long before
HX = {"HX-Request": "true"}


class Stats:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = collections.defaultdict(list)
        # (monotonic start, seconds) per kind, to split the login burst from steady state
        self.samples: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
        self.last_login = 0.0
        self.began = 0.0
        self.statuses: collections.Counter = collections.Counter()  # (kind, status)
        self.errors: collections.Counter = collections.Counter()  # description
        self.error_samples: list[str] = []
        self.refused = 0
        self.requests = 0
        self.checks_started: list[int] = []
        self.checks_unfinished_by_user: list[int] = []

    def error(self, description: str, sample: str = "") -> None:
        self.errors[description] += 1
        if len(self.error_samples) < 8:
            self.error_samples.append(f"{description}: {sample[:300]}")


class User:
    def __init__(self, index: int, username: str, metric_pk: int, args, stats: Stats) -> None:
        self.index = index
        self.username = username
        self.metric_pk = metric_pk
        self.args = args
        self.stats = stats
        self.edits = 0

    async def request(
        self,
        client: httpx.AsyncClient,
        kind: str,
        method: str,
        url: str,
        expected: tuple[int, ...],
        **kwargs,
    ) -> httpx.Response | None:
        started = time.monotonic()
        self.stats.requests += 1
        try:
            response = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.stats.error(f"{kind}: {type(exc).__name__}", f"{method} {url}: {exc!r}")
            return None
        elapsed = time.monotonic() - started
        self.stats.statuses[(kind, response.status_code)] += 1
        if response.status_code == 429 and kind == "run":
            self.stats.refused += 1
            return response
        if response.status_code not in expected:
            self.stats.error(
                f"{kind}: HTTP {response.status_code}", f"{method} {url}: {response.text}"
            )
            return None
        self.stats.times[kind].append(elapsed)
        self.stats.samples[kind].append((started, elapsed))
        return response

    def form(self, action: str) -> dict:
        return {**self.args.form, "source": self.source, "action": action}

    @property
    def source(self) -> str:
        return f"{self.args.source}# edit {self.edits} by {self.username}\n"

    async def think(self) -> None:
        if self.args.think > 0:
            await asyncio.sleep(self.args.think * random.uniform(0.5, 1.5))

    def csrf(self, client: httpx.AsyncClient) -> str:
        for cookie in client.cookies.jar:
            if cookie.name == "csrftoken":
                return cookie.value
        return ""

    async def run(self, deadline: float, drain_deadline: float) -> None:
        await asyncio.sleep(self.args.ramp * self.index / max(self.args.users, 1))
        async with httpx.AsyncClient(
            base_url=self.args.base_url,
            trust_env=False,
            timeout=httpx.Timeout(self.args.timeout),
            follow_redirects=False,
            headers={"User-Agent": "skynet-load-test"},
        ) as client:
            login = "/en/accounts/login/"
            if await self.request(client, "login page", "GET", login, (200,)) is None:
                return
            data = {
                "username": self.username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.csrf(client),
            }
            if await self.request(client, "login", "POST", login, (302,), data=data) is None:
                return
            self.stats.last_login = max(self.stats.last_login, time.monotonic())
            page = f"/en/metrics/{self.metric_pk}/"
            save = f"/en/metrics/{self.metric_pk}/save/"
            for _ in range(MAX_ITERATIONS):
                if time.monotonic() >= deadline:
                    return
                await self.request(client, "page", "GET", page, (200,))
                await self.think()
                if time.monotonic() >= deadline:
                    return
                self.edits += 1
                data = {**self.form("save"), "csrfmiddlewaretoken": self.csrf(client)}
                await self.request(client, "save", "POST", save, (200,), data=data, headers=HX)
                await self.think()
                if time.monotonic() >= deadline:
                    return
                await self.check(client, save, drain_deadline)
                await self.think()

    async def check(self, client: httpx.AsyncClient, save: str, drain_deadline: float) -> None:
        data = {**self.form("run"), "csrfmiddlewaretoken": self.csrf(client)}
        started = time.monotonic()
        response = await self.request(client, "run", "POST", save, (200,), data=data, headers=HX)
        if response is None or response.status_code == 429:
            return
        found = PANEL.search(response.text)
        if not found:
            self.stats.error("run: no polling URL in the panel", response.text)
            return
        check_id = int(found.group(2))
        self.stats.checks_started.append(check_id)
        # As the page does: a panel with trigger "load" asks at once and the server answers
        # when the check changes; one with "load delay:..." asks again on a timer.
        while found is not None and time.monotonic() < drain_deadline:
            url, trigger = found.group(1).replace("&amp;", "&"), found.group(3)
            if trigger != "load":
                await asyncio.sleep(self.args.poll)
            response = await self.request(client, "poll", "GET", url, (200, 286), headers=HX)
            if response is not None and response.status_code == 286:
                elapsed = time.monotonic() - started
                self.stats.times["check"].append(elapsed)
                self.stats.samples["check"].append((started, elapsed))
                return
            found = PANEL.search(response.text) if response is not None else None
        self.stats.checks_unfinished_by_user.append(check_id)


def prepare_users(count: int) -> list[tuple[str, int]]:
    """Users share one password hash (hashing 50 times would take ~20 s of CPU)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from metrics.services import metric_create

    User = get_user_model()
    hashed = make_password(PASSWORD)
    User.objects.bulk_create([User(username=f"load{i:03d}", password=hashed) for i in range(count)])
    users = list(User.objects.filter(username__startswith="load").order_by("username"))
    return [
        (user.username, metric_create(owner=user, name="load", starter="exact_match").pk)
        for user in users
    ]


def editor_form() -> tuple[str, dict]:
    """The editor's fields as the page posts them, for the exact_match starter."""
    from metrics.forms import CaseForm
    from metrics.starters import STARTERS

    starter = STARTERS["exact_match"]
    form = {"timeout_s": "20", "reflection_model": "", "metric_model": ""}
    for index, case in enumerate(starter.cases):
        initial = CaseForm.initial_for(case)
        for field in ("input", "output_kind", "output", "expected", "observation"):
            form[f"case{index}-{field}"] = initial[field]
    return starter.source, form


def wait_for_stragglers(timeout_s: float) -> tuple[dict, float]:
    from checks.models import Check

    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if not Check.objects.exclude(status__in=Check.FINAL).exists():
            break
        time.sleep(0.5)
    waited = time.monotonic() - started
    counts = collections.Counter(Check.objects.values_list("status", flat=True))
    return dict(counts), waited


def db_report(stats: Stats) -> dict:
    from checks.models import Check

    rows = list(
        Check.objects.values(
            "pk", "status", "failure", "created_at", "started_at", "finished_at", "result"
        )
    )
    final = [r for r in rows if r["status"] in Check.FINAL and r["finished_at"]]
    queue = [(r["started_at"] - r["created_at"]).total_seconds() for r in final if r["started_at"]]
    run = [(r["finished_at"] - r["started_at"]).total_seconds() for r in final if r["started_at"]]
    total = [(r["finished_at"] - r["created_at"]).total_seconds() for r in final]
    failed = collections.Counter(
        (r["failure"] or (r["result"] or {}).get("failed_stage") or "?")
        for r in rows
        if r["status"] == Check.Status.FAILED
    )
    not_final = [(r["pk"], r["status"]) for r in rows if r["status"] not in Check.FINAL]
    seen = set(stats.checks_started)
    return {
        "rows": len(rows),
        "queue": queue,
        "run": run,
        "total": total,
        "failed": dict(failed),
        "not_final": not_final,
        "unknown_to_users": len([r for r in rows if r["pk"] not in seen]),
    }


def scan_logs(stack: Stack) -> dict[str, list[str]]:
    """Error lines in the gunicorn and worker logs, counted by their message."""
    patterns = (
        "Traceback",
        " ERROR ",
        "CRITICAL",
        "WORKER TIMEOUT",
        "database is locked",
        "Internal Server Error",
    )
    found: dict[str, list[str]] = {}
    for name, path in stack.log_files.items():
        counts: collections.Counter = collections.Counter()
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            if any(p in line for p in patterns):
                counts[re.sub(r"^\S+ \S+ ", "", line)[:160]] += 1
        if counts:
            found[name] = [f"{n:5d} x {text}" for text, n in counts.most_common(8)]
    return found


async def drive(args, users: list[tuple[str, int]], stats: Stats) -> float:
    started = stats.began = time.monotonic()
    deadline = started + args.seconds
    drain_deadline = deadline + args.drain
    tasks = [
        asyncio.create_task(User(i, username, pk, args, stats).run(deadline, drain_deadline))
        for i, (username, pk) in enumerate(users)
    ]
    # A hard cap on top of every loop's own bounds. (On Ctrl+C asyncio.run cancels them.)
    done, pending = await asyncio.wait(tasks, timeout=args.seconds + args.drain + 60)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if pending:
        stats.error("user still running at the hard time cap", f"{len(pending)} users")
    for task in done:
        if task.exception() is not None:  # a bug in this script: show it
            raise task.exception()
    return time.monotonic() - started


def report(args, stats: Stats, elapsed: float, db: dict, final_counts: dict, waited: float):
    ms = 1000

    def row(label: str, values: list[float]) -> None:
        if not values:
            print(f"  {label:<38} n=0")
            return
        print(
            f"  {label:<38} n={len(values):<5d} p50 {percentile(values, 50) * ms:8.1f} ms"
            f"   p95 {percentile(values, 95) * ms:8.1f} ms   max {max(values) * ms:8.1f} ms"
        )

    print()
    print(
        f"Load: {args.users} users, {args.seconds:.0f} s (+ drain), gunicorn 4 workers, "
        f"2 Celery workers, think {args.think} s, poll every {args.poll} s"
    )
    print(f"  wall time of the user phase {elapsed:.1f} s")
    print()
    print("Latency seen by the users (client side, loopback):")
    row("GET playground page", stats.times["page"])
    row("save (htmx POST)", stats.times["save"])
    row("run (htmx POST, check created)", stats.times["run"])
    row("check: run POST -> panel says final", stats.times["check"])
    row("panel poll request", stats.times["poll"])
    row("login page GET", stats.times["login page"])
    row("login POST", stats.times["login"])
    print()
    # The logins (a deliberately slow password hash each) crowd out everything else at the
    # start; the same numbers for the requests sent after the last login had finished:
    after = stats.last_login
    print(f"Steady state: requests started after the last login ({after - stats.began:.1f} s in):")
    for kind, label in (
        ("page", "GET playground page"),
        ("save", "save (htmx POST)"),
        ("run", "run (htmx POST, check created)"),
        ("check", "check: run POST -> panel says final"),
        ("poll", "panel poll request"),
    ):
        row(label, [elapsed for start, elapsed in stats.samples[kind] if start >= after])
    print()
    print("Checks, from the database (timestamps):")
    row("enqueue -> final", db["total"])
    row("  queue (created -> started)", db["queue"])
    row("  run (started -> finished)", db["run"])
    print()
    answered = sum(stats.statuses.values())
    errors = sum(stats.errors.values())
    print(
        f"Requests: {stats.requests} sent, {answered} answered, "
        f"{stats.requests / elapsed:.1f} req/s over the user phase"
    )
    by_kind = collections.defaultdict(dict)
    for (kind, status), n in sorted(stats.statuses.items()):
        by_kind[kind][status] = n
    for kind, counts in by_kind.items():
        print(f"  {kind:<12} {counts}")
    print(f"Refused (429): {stats.refused}")
    print(f"Errors: {errors}  (target 0)")
    for description, n in stats.errors.most_common():
        print(f"  {n:5d} x {description}")
    for sample in stats.error_samples:
        print(f"    e.g. {sample!r}")
    print()
    print(
        f"Checks created: {db['rows']} in the database, {len(stats.checks_started)} seen "
        f"by users; {len(stats.checks_unfinished_by_user)} still not final when users stopped "
        f"polling; {db['unknown_to_users']} in the DB that no user saw"
    )
    print(f"  after waiting {waited:.1f} s for stragglers: {final_counts}")
    if db["failed"]:
        print(f"  failed checks by failure / failed stage: {db['failed']}")
    if db["not_final"]:
        print(f"  NOT FINAL: {len(db['not_final'])}: {db['not_final'][:20]}")
    else:
        print("  every check reached a final state")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--ramp", type=float, default=5, help="users start spread over this")
    parser.add_argument("--think", type=float, default=1.0, help="pause between actions (s)")
    parser.add_argument("--poll", type=float, default=1.0, help="panel poll interval (s)")
    parser.add_argument("--drain", type=float, default=60, help="max extra polling (s)")
    parser.add_argument("--timeout", type=float, default=30, help="per request (s)")
    parser.add_argument("--straggler-wait", type=float, default=60)
    parser.add_argument("--app-limits", action="store_true", help="keep the per-user check limits")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (db, logs)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    if not 1 <= args.users <= 500 or not 1 <= args.seconds <= 600:
        parser.error("--users must be 1-500 and --seconds 1-600")
    sigterm_as_interrupt()
    print(f"load average before start {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

    extra_env = {}
    if not args.app_limits:
        extra_env = {"SKYNET_CHECK_RATE_PER_MINUTE": "100000", "SKYNET_CHECK_MAX_ACTIVE": "1000"}
    stack = Stack(workers=2, gunicorn_workers=4, extra_env=extra_env, keep=args.keep)
    try:
        began = time.monotonic()
        stack.start()
        args.base_url = stack.base_url
        assert args.base_url.startswith("http://127.0.0.1:")
        print(f"stack up in {time.monotonic() - began:.1f} s at {args.base_url}")
        users = prepare_users(args.users)
        args.source, args.form = editor_form()
        stats = Stats()
        elapsed = asyncio.run(drive(args, users, stats))
        final_counts, waited = wait_for_stragglers(args.straggler_wait)
        db = db_report(stats)
        logs = scan_logs(stack)
        alive = {name: process.poll() is None for name, process in stack.processes()}
    finally:
        stack.stop()

    report(args, stats, elapsed, db, final_counts, waited)
    print()
    print(f"Processes alive at the end: {alive}")
    if logs:
        print("Log lines that look like errors (gunicorn, workers):")
        for name, lines in logs.items():
            print(f"  {name}:")
            for line in lines:
                print(f"    {line}")
    else:
        print("No error lines in the gunicorn and worker logs.")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "users": args.users,
                    "seconds": args.seconds,
                    "requests": stats.requests,
                    "errors": sum(stats.errors.values()),
                    "refused": stats.refused,
                    "latency_ms": {
                        kind: {
                            "n": len(values),
                            "p50": percentile(values, 50) * 1000,
                            "p95": percentile(values, 95) * 1000,
                        }
                        for kind, values in stats.times.items()
                    },
                    "checks": final_counts,
                },
                indent=2,
            )
            + "\n"
        )
    failed = sum(stats.errors.values()) or db["not_final"]
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        sys.exit(130)
