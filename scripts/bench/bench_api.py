"""The API's check round trip next to the same check started from the playground's page.

Both paths go through gunicorn on 127.0.0.1 to the same services and the same Celery
workers, with the same metric (the exact-match starter) and the same three cases. Each round
measures both, one after the other, the order swapped every round so drift hits both alike:

    api    POST /api/v1/checks {source, cases, timeout_s} with a bearer token, then
           GET /api/v1/checks/<id>/wait?timeout=25 until the answer says final, as
           `skynet check` does
    page   what the browser does on Run contract check: POST the playground's form to
           /en/metrics/<pk>/save/ with action=run as htmx sends it (HX-Request, the CSRF
           token, a session cookie from logging in through the form), then follow the check
           panel it answers: GET its hx-get (?partial=panel&since=...) after its hx-trigger's
           delay, if any, until an answer is 286 (final)

Each time is from before the first request to the final answer read whole. The ratio
API / page is expected near 1.0: the paths differ only in the request that starts the check
and the one that waits for it. Nothing here asserts on a time (scripts/bench/README.md). Usage:

    .venv/bin/python scripts/bench/bench_api.py [--rounds 30] [--warmup 3] [--keep]

The per-user check allowance and the token's requests a minute are raised through the
environment, so neither path is refused (SKYNET_CHECK_RATE_PER_MINUTE,
SKYNET_API_RATE_PER_MINUTE).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stack import Stack, percentile, sigterm_as_interrupt
from load_test import PANEL, editor_form

PASSWORD = "bench-api-password-1"
HX = {"HX-Request": "true"}
DELAY = re.compile(r"delay:(\d+)ms")
WAIT_S = 25  # what `skynet check` asks the wait endpoint for


def api_round(client: httpx.Client, body: dict) -> tuple[float, float, int, int]:
    """(seconds, seconds of the first request, requests, check id) of one check through
    the API."""
    started = time.perf_counter()
    response = client.post("/api/v1/checks", json=body)
    response.raise_for_status()
    first = time.perf_counter() - started
    check, requests = response.json(), 1
    while not check["final"]:
        response = client.get(f"/api/v1/checks/{check['id']}/wait", params={"timeout": WAIT_S})
        response.raise_for_status()
        check, requests = response.json(), requests + 1
    return time.perf_counter() - started, first, requests, check["id"]


def page_round(client: httpx.Client, save_url: str, form: dict) -> tuple[float, float, int, int]:
    """(seconds, seconds of the first request, requests, check id) of one Run contract
    check through the page."""
    data = {**form, "action": "run", "csrfmiddlewaretoken": client.cookies["csrftoken"]}
    started = time.perf_counter()
    response = client.post(save_url, data=data, headers=HX)
    response.raise_for_status()
    first = time.perf_counter() - started
    requests = 1
    found = PANEL.search(response.text)
    if found is None:
        raise RuntimeError(f"no live panel in the Run answer: {response.text[:500]}")
    check_id = int(found.group(2))
    while True:
        url, trigger = found.group(1).replace("&amp;", "&"), found.group(3)
        delay = DELAY.search(trigger)
        if delay:
            time.sleep(int(delay.group(1)) / 1000)
        response = client.get(url, headers=HX)
        response.raise_for_status()
        requests += 1
        if response.status_code == 286:
            return time.perf_counter() - started, first, requests, check_id
        found = PANEL.search(response.text)
        if found is None:
            raise RuntimeError(f"a live panel that names no next request: {response.text[:500]}")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def table(rows: dict[str, dict], numerator: str, denominator: str) -> list[str]:
    """The printed table: p50/p90 of each path (rows[name]["label"], its "times",
    "first" request times and "requests" per round, its checks' "db" times), then
    numerator / denominator."""
    ms = 1000
    lines = [
        f"  {'':<26}{'p50':>10}{'p90':>10}{'requests':>10}{'first p50':>12}{'check in DB p50':>18}",
    ]
    for row in rows.values():
        lines.append(
            f"  {row['label']:<26}{percentile(row['times'], 50) * ms:>7.1f} ms"
            f"{percentile(row['times'], 90) * ms:>7.1f} ms"
            f"{sum(row['requests']) / max(len(row['requests']), 1):>10.1f}"
            f"{percentile(row['first'], 50) * ms:>9.1f} ms"
            f"{percentile(row['db'], 50) * ms:>15.1f} ms"
        )
    a, b = rows[numerator], rows[denominator]
    lines.append(
        f"  {numerator + ' / ' + denominator:<26}"
        f"{ratio(percentile(a['times'], 50), percentile(b['times'], 50)):>10}"
        f"{ratio(percentile(a['times'], 90), percentile(b['times'], 90)):>10}"
        f"{'':>10}{ratio(percentile(a['first'], 50), percentile(b['first'], 50)):>12}"
        f"{ratio(percentile(a['db'], 50), percentile(b['db'], 50)):>18}"
    )
    return lines


def prepare():
    """A user with a password (for the page) and a read-and-write token (for the API),
    and the exact-match starter as a metric of theirs."""
    from django.contrib.auth import get_user_model

    from api.tokens import token_create
    from metrics.services import metric_create
    from metrics.starters import STARTERS

    user = get_user_model().objects.create_user(username="bench-api", password=PASSWORD)
    metric = metric_create(owner=user, name="bench", starter="exact_match")
    _row, token = token_create(owner=user, name="bench", scope="write", days=1)
    return user, metric, token, STARTERS["exact_match"]


def log_in(client: httpx.Client) -> None:
    login = "/en/accounts/login/"
    client.get(login).raise_for_status()
    data = {
        "username": "bench-api",
        "password": PASSWORD,
        "csrfmiddlewaretoken": client.cookies["csrftoken"],
    }
    response = client.post(login, data=data)
    if response.status_code != 302:
        raise RuntimeError(f"log-in answered {response.status_code}")


def checks_in_db(ids: list[int]) -> tuple[list[float], list[list]]:
    """Each check's created_at -> finished_at, and the cases it ran."""
    from checks.models import Check

    rows = {row.pk: row for row in Check.objects.filter(pk__in=ids)}
    bad = [(pk, rows[pk].status) for pk in ids if rows[pk].status != Check.Status.PASSED]
    if bad:
        raise RuntimeError(f"checks that did not pass: {bad[:5]}")
    times = [(rows[pk].finished_at - rows[pk].created_at).total_seconds() for pk in ids]
    return times, [rows[pk].cases for pk in ids]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3, help="rounds not counted")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (db, logs)")
    args = parser.parse_args()
    if not 1 <= args.rounds <= 1000:
        parser.error("--rounds must be 1-1000")
    sigterm_as_interrupt()
    print(f"bench_api: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    unlimited = {"SKYNET_CHECK_RATE_PER_MINUTE": "100000", "SKYNET_API_RATE_PER_MINUTE": "100000"}
    stack = Stack(workers=2, gunicorn_workers=2, extra_env=unlimited, keep=args.keep)
    rows = {
        "api": {"label": "api: POST + wait", "times": [], "first": [], "requests": [], "ids": []},
        "page": {
            "label": "page: Run + live panel",
            "times": [],
            "first": [],
            "requests": [],
            "ids": [],
        },
    }
    try:
        stack.start()
        _user, metric, token, starter = prepare()
        source, form = editor_form()
        form = {**form, "source": source}
        body = {"source": source, "cases": list(starter.cases), "timeout_s": int(form["timeout_s"])}
        save_url = f"/en/metrics/{metric.pk}/save/"
        common = {"base_url": stack.base_url, "trust_env": False, "timeout": 60}
        with (
            httpx.Client(headers={"Authorization": f"Bearer {token}"}, **common) as api,
            httpx.Client(follow_redirects=False, **common) as page,
        ):
            log_in(page)
            paths = {
                "api": lambda: api_round(api, body),
                "page": lambda: page_round(page, save_url, form),
            }
            for number in range(args.warmup + args.rounds):
                order = ("api", "page") if number % 2 == 0 else ("page", "api")
                for name in order:
                    seconds, first, requests, check_id = paths[name]()
                    if number >= args.warmup:
                        rows[name]["times"].append(seconds)
                        rows[name]["first"].append(first)
                        rows[name]["requests"].append(requests)
                        rows[name]["ids"].append(check_id)
        for row in rows.values():
            row["db"], row["cases"] = checks_in_db(row["ids"])
    finally:
        stack.stop()

    same_cases = all(
        cases == rows["api"]["cases"][0] for row in rows.values() for cases in row["cases"]
    )
    print()
    print(
        f"{args.rounds} rounds (after {args.warmup} of warm-up), the order swapped each round; "
        "gunicorn (2 workers x 8 threads) + 2 Celery workers on 127.0.0.1"
    )
    print(f"the same metric and cases on both paths: {'yes' if same_cases else 'NO'}")
    for line in table(rows, "api", "page"):
        print(line)
    return 0 if same_cases else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        sys.exit(130)
