"""Counts read with the reader's digit grouping ("3,000", "3 000", "3,000" in Hindi) on the
run page, the evaluation pages and the wizard, in the three languages."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone, translation

from evaluations.models import Evaluation
from runs.models import Run
from tests.evaluations.test_evaluation_pages import make_case, make_evaluation, summary
from tests.runs.run_data import hand_run
from tests.submissions.test_submit_wizard import artifact_data, dataset_data, upload, url
from wording import format_count

pytestmark = pytest.mark.django_db

LANGUAGES = ["en", "es", "hi"]


def text_of(html: str) -> str:
    """The page's words, entities read; the no-break space Spanish groups with kept."""
    return re.sub(r"[ \t\n]+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def part(html: str, ident: str) -> str:
    start = html.index(f'id="{ident}"')
    end = html.index("</section>", start) if "</section>" in html[start:] else len(html)
    return text_of(html[start:end])


def grouped(language: str, *numbers: int) -> list[str]:
    with translation.override(language):
        return [format_count(n) for n in numbers]


def test_grouping_is_the_readers():
    assert grouped("en", 3000, 1234567) == ["3,000", "1,234,567"]
    assert grouped("es", 3000) == ["3\xa0000"]
    assert grouped("hi", 3000, 1234567) == ["3,000", "12,34,567"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_run_page_groups_its_counts(owner_client, owner, language):
    run = hand_run(owner, metric_calls=3000)
    progress = dict(run.progress, max_metric_calls=3000, iteration=1500)
    progress["spend"] = dict(progress["spend"], task_calls=12345)
    # 1,204 validation cases on the frontier: 200 are shown, the rest counted.
    progress["front"] = {str(i): [1] for i in range(1204)}
    config = run.config
    config["budget"]["metric_calls"] = 3000
    config["dataset"]["rows"] = 3000
    config["dataset"]["splits"]["counts"] = {"train": 1500, "validation": 1500, "test": 0}
    Run.objects.filter(pk=run.pk).update(progress=progress, config=config)
    html = owner_client.get(f"/{language}/runs/{run.pk}/").content.decode()
    three, fifteen, task_calls, more = grouped(language, 3000, 1500, 12345, 1004)
    calls = text_of(re.search(r'id="run-calls"[^>]*>(.*?)</p>', html, re.S).group(1))
    assert calls.count(three) == 2 and "3000" not in calls
    assert text_of(re.search(r'id="run-iteration">(.*?)<', html).group(1)) == fifteen
    assert task_calls in part(html, "run-spend")
    assert more in part(html, "run-frontier")
    setup = part(html, "run-setup")
    assert setup.count(three) == 2 and setup.count(fifteen) == 2  # rows, budget; splits
    assert "3000" not in setup and "1500" not in setup
    runs = owner_client.get(f"/{language}/runs/").content.decode()
    assert f"{three} " in text_of(runs) and "3000" not in text_of(runs)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_evaluation_pages_group_their_counts(owner_client, owner, language):
    big = summary(cases=3000, total=3000)
    big["failures"][0]["count"] = 1200
    big["feedback"] = dict(big["feedback"], returned=2500, unhelpful_low_count=1500)
    done = make_evaluation(owner, status=Evaluation.Status.DONE, total=3000, done=3000, summary=big)
    make_case(done, 0, score=0.0, feedback="Wrong.", feedback_kind="generic")
    html = owner_client.get(f"/{language}/evaluations/{done.pk}/").content.decode()
    three, twelve, fifteen, returned = grouped(language, 3000, 1200, 1500, 2500)
    page = text_of(html)
    assert f"{three} " in page and "3000" not in page
    assert f"{twelve} " in part(html, "failures") and "1200" not in part(html, "failures")
    feedback = part(html, "feedback")
    assert returned in feedback and f"{fifteen} " in feedback
    running = make_evaluation(
        owner,
        status=Evaluation.Status.RUNNING,
        total=3000,
        done=1500,
        started_at=timezone.now() - timedelta(seconds=10),
        heartbeat_at=timezone.now(),
    )
    live = text_of(owner_client.get(f"/{language}/evaluations/{running.pk}/").content.decode())
    assert f"{fifteen} " in live and f" {three} " in live
    listed = text_of(owner_client.get(f"/{language}/evaluations/").content.decode())
    assert f"{fifteen} " in listed and "3000" not in listed and "1500" not in listed


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_wizard_groups_the_rows_and_the_splits(owner_client, draft, language):
    rows = "".join(f"T-{i},Question number {i}?,billing\n" for i in range(3000))
    csv = ("ticket_id,question,label\n" + rows).encode()
    assert owner_client.post(url(draft, "artifact"), artifact_data()).status_code == 302
    assert upload(owner_client, draft, csv).status_code == 302
    draft.refresh_from_db()
    roles = {"question": "input", "label": "output"}
    data = dataset_data(draft.dataset.columns, roles)
    assert owner_client.post(url(draft, "dataset"), data).status_code == 302
    page = owner_client.get(f"/{language}/submit/{draft.pk}/dataset/").content.decode()
    three, train, rest = grouped(language, 3000, 1800, 600)
    assert f"{three} " in text_of(page) and "3000" not in text_of(page)
    counts = text_of(re.search(r'id="split-counts">(.*?)</p>', page, re.S).group(1))
    assert train in counts and "1800" not in counts and rest in counts
