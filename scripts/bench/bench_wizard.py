"""The submit wizard's server time with a dataset at the size limit, next to a small one.

    .venv/bin/python scripts/bench/bench_wizard.py [--rows 200000] [--repeat 5]

Uses a fresh SQLite database in a temp dir (migrated here) and Django's test client, so it
measures the views, the services and the ORM, not a network. For each page it prints the
median over --repeat requests with a 10-row dataset and with a large one (default: 200,000
rows, about 19 MB of CSV, under the 20 MB limit) and their ratio. The upload is compared with
its floor: Python's own csv module reading the same bytes. Nothing asserts on a time.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

METRIC = """def score(input, output, expected=None):
    if expected is None:
        return 0.0, {"feedback": "No expected label."}
    ok = str(output) == expected["label"]
    return float(ok), {"feedback": "Correct." if ok else f"Expected {expected['label']!r}."}
"""
PROGRAM = "def run(artifact, input):\n    return 'billing'\n"


def make_csv(rows: int) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["ticket_id", "question", "label"])
    labels = ("billing", "bug", "account")
    for i in range(rows):
        writer.writerow(
            [
                f"T-{i}",
                f"Ticket {i}: I was charged twice for my subscription, order {i * 7}.",
                labels[i % 3],
            ]
        )
    return out.getvalue().encode()


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="skynet-bench-wizard-"))
    os.environ.update(
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        DJANGO_SETTINGS_MODULE="skynet_web.settings",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(40),
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import User

    from metrics import services as metric_services
    from submissions import services

    user = User.objects.create_user("bench", password="bench-pass-123")
    metric = metric_services.metric_create(owner=user, name="m", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=METRIC)
    client = Client()
    client.force_login(user)

    def draft_with(data: bytes):
        draft = services.draft_create(owner=user)
        services.draft_update(
            draft, "artifact", {"artifact_kind": "python", "program_source": PROGRAM}
        )
        services.dataset_upload(draft, filename="t.csv", data=data)
        draft.refresh_from_db()
        services.draft_update(draft, "metric", {"metric_mode": "saved", "metric_version": version})
        services.draft_update(
            draft,
            "models",
            {"task_model": "openai/gpt-4.1-mini", "reflection_model": "openai/gpt-4.1-mini"},
        )
        return draft

    small_bytes, large_bytes = make_csv(10), make_csv(args.rows)
    print(
        f"load average {os.getloadavg()[0]:.2f}; large file {len(large_bytes) / 1e6:.1f} MB, {args.rows} rows"
    )

    start = time.perf_counter()
    large = draft_with(large_bytes)
    upload_ms = (time.perf_counter() - start) * 1000
    floor_ms = median_ms(lambda: sum(1 for _ in csv.reader(io.StringIO(large_bytes.decode()))), 3)
    print(
        f"upload (parse + store) {upload_ms:8.0f} ms   floor (csv module) {floor_ms:6.0f} ms   ratio {upload_ms / floor_ms:5.1f}x"
    )

    small = draft_with(small_bytes)
    print(f"{'page':30} {'10 rows':>10} {'large':>10} {'ratio':>7}")
    for step in ("artifact", "dataset", "metric", "models", "check"):
        times = []
        for draft in (small, large):
            url = f"/en/submit/{draft.pk}/{step}/"
            assert client.get(url).status_code == 200, (step, client.get(url).status_code)
            times.append(median_ms(lambda url=url: client.get(url), args.repeat))
        print(f"GET {step:26} {times[0]:8.1f}ms {times[1]:8.1f}ms {times[1] / times[0]:6.1f}x")
    posts = []
    for draft in (small, large):
        data = {
            "role_0": "ignore",
            "role_1": "input",
            "role_2": "output",
            "split_mode": "ratio",
            "train_percent": 70,
            "validation_percent": 15,
            "test_percent": 15,
            "seed": 1,
            "split_column": "",
            "action": "save",
        }
        url = f"/en/submit/{draft.pk}/dataset/"
        posts.append(median_ms(lambda url=url, data=data: client.post(url, data), args.repeat))
    print(
        f"POST dataset (save)            {posts[0]:8.1f}ms {posts[1]:8.1f}ms {posts[1] / posts[0]:6.1f}x"
    )


if __name__ == "__main__":
    main()
