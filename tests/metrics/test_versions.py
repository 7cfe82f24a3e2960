"""A metric's versions and checks link to each other: numbered, highlighted code, the
latest verdict of each version, and a history that says when it shows only the latest."""

from __future__ import annotations

import re

import pytest

from checks.models import Check
from metrics import services as metric_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(owner=owner, name="labels", starter="exact_match")


def test_a_version_page_numbers_and_highlights_its_lines_and_shows_its_verdict(
    owner_client, owner, metric
):
    version = metric.latest_version
    check = Check.objects.create(
        owner=owner, source=version.source, metric_version=version, status="failed"
    )
    page = owner_client.get(f"/en/metrics/{metric.pk}/versions/1/").content.decode()
    lines = version.source.count("\n") + 1
    assert f'id="L{lines}"' in page and f'id="L{lines + 1}"' not in page
    assert '<span class="k">def</span>' in page  # highlighted as Python
    assert f'href="/en/checks/{check.pk}/"' in page and "Failed" in page


def test_history_and_check_pages_link_to_the_version_they_checked(owner_client, owner, metric):
    version = metric.latest_version
    check = Check.objects.create(
        owner=owner, source=version.source, metric_version=version, status="passed"
    )
    version_url = f"/en/metrics/{metric.pk}/versions/1/"
    playground = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    history = re.search(r'<section class="history".*?</section>', playground, re.S).group(0)
    assert f'href="{version_url}">v1</a>' in history
    assert f'href="{version_url}"' in owner_client.get(f"/en/checks/{check.pk}/").content.decode()


def test_the_versions_list_shows_each_versions_latest_verdict(owner_client, owner, metric):
    first = metric.latest_version
    second, _ = metric_services.metric_save(metric, source=first.source + "\n# two\n")
    Check.objects.create(owner=owner, source="x", metric_version=first, status="failed")
    Check.objects.create(owner=owner, source="x", metric_version=first, status="passed")
    listing = owner_client.get(f"/en/metrics/{metric.pk}/versions/").content.decode()
    rows = re.findall(r"<tr>.*?</tr>", listing, re.S)
    by_version = {re.search(r">v(\d+)<", row).group(1): row for row in rows if ">v" in row}
    assert "Passed" in by_version["1"] and "Failed" not in by_version["1"]
    assert "Not checked" in by_version[str(second.number)]


def test_the_history_says_when_it_shows_only_the_latest_checks(owner_client, owner, metric):
    version = metric.latest_version
    Check.objects.bulk_create(
        Check(owner=owner, source="x", metric_version=version, status="passed") for _ in range(23)
    )
    page = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert "The latest 20 of 23 checks." in page


def test_a_diff_folds_long_unchanged_runs_and_numbers_both_sides(owner_client, metric):
    source = "\n".join(f"x{i} = {i}" for i in range(40)) + "\n" + metric.latest_version.source
    metric_services.metric_save(metric, source=source)
    metric_services.metric_save(metric, source=source.replace("x20 = 20", "x20 = 21"))
    page = owner_client.get(f"/en/metrics/{metric.pk}/diff/?a=2&b=3").content.decode()
    changed = re.findall(r'<tr class="change">.*?</tr>', page, re.S)
    assert len(changed) == 1 and '<td class="ln">21</td>' in changed[0]
    assert "17 unchanged lines" in page  # lines 1-17 fold before the 3 lines of context
    assert page.count('<tr class="same">') == 6
