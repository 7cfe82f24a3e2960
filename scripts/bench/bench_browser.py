"""Click to verdict in a real browser: how long after clicking Run the user sees the result.

Debian's Chromium (/usr/bin/chromium), driven by Playwright, against the private stack of
bench_checks.py with gunicorn in front (what a user's browser talks to). Each round:

    page load   GET the metric's page until its load event (for scale: a plain page load)
    run         click "Run contract check" until the new panel shows passed or failed

The two alternate, so drift hits both alike. Nothing here asserts on a time; the numbers
are for a person to read (scripts/bench/README.md). Usage:

    .venv/bin/python scripts/bench/bench_browser.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_stack import Stack, percentile, sigterm_as_interrupt

# The browser and the flags of the browser tests.
from tests.browser.conftest import CHROMIUM, FLAGS

# True once a panel that was not on the page before the click says passed or failed.
NEW_VERDICT = """() => {
    const panel = document.querySelector('#check');
    return !!panel && panel.dataset.before !== '1'
        && /status-(passed|failed)/.test(panel.className);
}"""
MARK_PANEL = "() => { const p = document.querySelector('#check'); if (p) p.dataset.before = '1'; }"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    sigterm_as_interrupt()
    print(f"bench_browser: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    stack = Stack(workers=2, gunicorn_workers=2)
    loads, runs = [], []
    try:
        stack.start()
        from django.contrib.auth import get_user_model
        from playwright.sync_api import sync_playwright

        from metrics.services import metric_create

        password = "bench-browser-pass-1"
        owner = get_user_model().objects.create_user(username="browser", password=password)
        metric = metric_create(owner=owner, name="bench", starter="exact_match")
        url = f"{stack.base_url}/en/metrics/{metric.pk}/"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=FLAGS, headless=True
            )
            # The site's CSP forbids eval; the measuring predicates are the script's own.
            context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{stack.base_url}/en/accounts/login/")
            page.fill("input[name=username]", "browser")
            page.fill("input[name=password]", password)
            page.click("form.form button[type=submit]")
            page.wait_for_url(f"{stack.base_url}/en/")
            for round_number in range(args.rounds + 2):
                started = time.perf_counter()
                page.goto(url, wait_until="load")
                load = time.perf_counter() - started
                page.wait_for_selector(".cm-editor")
                page.evaluate(MARK_PANEL)
                started = time.perf_counter()
                page.click("#run-check")
                page.wait_for_function(NEW_VERDICT, polling="raf")
                run = time.perf_counter() - started
                if round_number >= 2:  # two rounds of warm-up
                    loads.append(load)
                    runs.append(run)
            browser.close()
    finally:
        stack.stop()

    ms = 1000
    print()
    print(f"{args.rounds} rounds, Chromium {CHROMIUM}, gunicorn (2 workers) + 2 Celery workers")
    for label, values in (("plain page load", loads), ("click Run -> verdict", runs)):
        print(
            f"  {label:<22} p50 {percentile(values, 50) * ms:7.1f} ms   "
            f"p95 {percentile(values, 95) * ms:7.1f} ms"
        )
    print(
        f"  verdict / page load (p50)  {statistics.median(runs) / statistics.median(loads):.2f} x"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        sys.exit(130)
