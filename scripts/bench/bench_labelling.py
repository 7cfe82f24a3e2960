"""A labelling keystroke in a real browser: from keydown to the label shown saved and the
next case on screen, on a labelling of a 200,000-row dataset and of a 60-row one.

Debian's Chromium (/usr/bin/chromium), driven by Playwright, against the private stack of
bench_stack.py with gunicorn in front. The times are taken inside the page: a keydown
listener notes performance.now(), and a MutationObserver notes it again once the case
panel that replaced the old one shows the next case with the label just saved. For scale,
each keystroke alternates with two baselines fetched from the same page: /favicon.ico (the
floor of a round trip to this server) and the labelling list (a plain page of the user's).
Nothing here asserts on a time; the numbers are for a person to read
(scripts/bench/README.md). Usage:

    .venv/bin/python scripts/bench/bench_labelling.py [--keys 50] [--rows 200000]
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
from bench_wizard import make_csv

# The browser and the flags of the browser tests.
from tests.browser.conftest import CHROMIUM, FLAGS

# Installed once a page: the keydown's time, and the time the panel shows case `want`
# with the previous case's label saved (its "just labelled" strip).
PROBE = """() => {
    window.__bench = {down: 0, shown: 0, want: 0};
    document.addEventListener('keydown', () => { window.__bench.down = performance.now(); }, true);
    new MutationObserver(() => {
        const panel = document.getElementById('labelling-case');
        const b = window.__bench;
        if (!b.shown && panel && Number(panel.dataset.position) + 1 === b.want
                && panel.querySelector('#label-just')) {
            b.shown = performance.now();
        }
    }).observe(document.querySelector('main'), {childList: true, subtree: true});
}"""
ARM = "want => { window.__bench.shown = 0; window.__bench.want = want; }"
SHOWN = "() => window.__bench.shown > 0"
ELAPSED = "() => window.__bench.shown - window.__bench.down"
# The baselines, fetched from the same page: /favicon.ico (a redirect Django answers
# without a session or a template: the floor of a round trip to this server) and the
# labelling list (a plain page of the user's, with its session and queries).
FETCH = """async path => {
    const started = performance.now();
    await (await fetch(path, {cache: 'no-store', redirect: 'manual'})).text();
    return performance.now() - started;
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=50, help="keystrokes per labelling")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the large dataset")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    sigterm_as_interrupt()
    print(f"bench_labelling: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    stack = Stack(workers=0, gunicorn_workers=2)
    keys: dict[str, list[float]] = {"small": [], "large": []}
    floor: list[float] = []
    plain: list[float] = []
    made: dict[str, float] = {}
    try:
        stack.start()
        from django.contrib.auth import get_user_model
        from playwright.sync_api import sync_playwright

        from labelling import services
        from submissions import services as submit_services

        password = "bench-labelling-pass-1"
        owner = get_user_model().objects.create_user(username="labeller", password=password)
        labellings = {}
        for name, rows in (("small", 10 + args.keys), ("large", args.rows)):
            dataset = submit_services.dataset_create(
                owner=owner, filename=f"{name}.csv", data=make_csv(rows)
            )
            started = time.perf_counter()
            labellings[name] = services.labelling_create(
                owner=owner,
                dataset=dataset,
                input_columns=["question"],
                expected_column="label",
            )
            made[name] = time.perf_counter() - started
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=FLAGS, headless=True
            )
            # The site's CSP forbids eval; the measuring predicates are the script's own.
            context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{stack.base_url}/en/accounts/login/")
            page.fill("input[name=username]", "labeller")
            page.fill("input[name=password]", password)
            page.keyboard.press("Enter")
            page.wait_for_url(f"{stack.base_url}/en/")
            for name, labelling in labellings.items():
                page.goto(f"{stack.base_url}/en/labellings/{labelling.pk}/", wait_until="load")
                page.evaluate(PROBE)
                for number in range(1, args.keys + 3):
                    page.evaluate(ARM, number + 1)
                    page.keyboard.press("1" if number % 2 else "0")
                    page.wait_for_function(SHOWN, polling="raf")
                    elapsed = page.evaluate(ELAPSED)
                    fetched = page.evaluate(FETCH, "/favicon.ico")
                    listed = page.evaluate(FETCH, "/en/labellings/")
                    if number > 2:  # two keystrokes of warm-up
                        keys[name].append(elapsed / 1000)
                        floor.append(fetched / 1000)
                        plain.append(listed / 1000)
            browser.close()
    finally:
        stack.stop()

    ms = 1000
    print()
    print(
        f"{args.keys} keystrokes a labelling, Chromium {CHROMIUM}, gunicorn (2 workers); "
        f"labelling made in {made['small'] * ms:.0f} ms ({10 + args.keys} rows) and "
        f"{made['large']:.1f} s ({args.rows} rows, once)"
    )
    rows = (
        ("fetch /favicon.ico (floor)", floor),
        ("fetch the labelling list (a page)", plain),
        (f"keydown -> next case, {10 + args.keys} rows", keys["small"]),
        (f"keydown -> next case, {args.rows} rows", keys["large"]),
    )
    for label, values in rows:
        print(
            f"  {label:<38} p50 {percentile(values, 50) * ms:7.1f} ms   "
            f"p95 {percentile(values, 95) * ms:7.1f} ms"
        )
    for label, base in (("favicon fetch", floor), ("list page fetch", plain)):
        print(
            f"  keystroke / {label} (p50)  "
            f"small {statistics.median(keys['small']) / statistics.median(base):.2f} x   "
            f"large {statistics.median(keys['large']) / statistics.median(base):.2f} x"
        )
    print(
        "  large / small dataset (p50)      "
        f"{statistics.median(keys['large']) / statistics.median(keys['small']):.2f} x"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        sys.exit(130)
