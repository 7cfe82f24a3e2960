"""Missing imports in the playground: the editor's live diagnostics and its one-click fix,
and the check panel's offer (the API's in tests/api, `skynet check --add-imports` in
tests/client)."""

from __future__ import annotations

import pytest

from checks import services as check_services
from checks.models import Check
from contract.engine import run_check
from jobs import sandbox_pool
from metrics import services as metric_services

PASTED = '''\
"""Pasted from a notebook cell: its imports were in an earlier cell."""

@dataclass
class Verdict:
    score: float
    feedback: str


def score(input, output, expected=None):
    words = Counter(re.findall(r"\\w+", output.lower()))
    hit = words[expected["label"]] > 0
    verdict = Verdict(1.0 if hit else 0.0, f"Expected {expected['label']!r} in {output!r}.")
    return verdict.score, {"feedback": verdict.feedback}
'''
FIXED_IMPORTS = [
    "import re",
    "from collections import Counter",
    "from dataclasses import dataclass",
]


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(
        owner=owner, name="pasted", starter="exact_match", source=PASTED
    )


@pytest.mark.django_db
def test_the_editor_marks_each_name_and_offers_to_add_them_all(owner_client, metric):
    url = f"/en/metrics/{metric.pk}/diagnostics/"
    found = owner_client.post(url, {"source": PASTED + "import torch\n"}).json()["diagnostics"]
    names = [d for d in found if d["code"] == "name_not_imported"]
    assert [(d["line"], d["column"]) for d in names] == [(3, 2), (10, 13), (10, 21)]
    assert names[0]["message"] == (
        "dataclass is used but never imported: add `from dataclasses import dataclass`."
    )
    assert {d["fix_label"] for d in names} == {"Add the 3 missing imports"}
    # An import the sandbox does not have is still said while the names are missing.
    assert any(d["code"] == "module_not_available" for d in found)


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["es", "hi"])
def test_the_fix_is_offered_in_the_readers_language(owner_client, metric, language):
    url = f"/{language}/metrics/{metric.pk}/diagnostics/"
    found = owner_client.post(url, {"source": PASTED}).json()["diagnostics"]
    label = found[0]["fix_label"]
    assert "3" in label and "Add the" not in label
    assert "never imported" not in found[0]["message"]


@pytest.mark.django_db
def test_the_one_click_fix_answers_the_text_with_the_lines_added(owner_client, metric):
    answer = owner_client.post(f"/en/metrics/{metric.pk}/add-imports/", {"source": PASTED}).json()
    assert answer["added"] == FIXED_IMPORTS and answer["missing"] == []
    assert answer["source"].splitlines()[answer["line"] - 1] == "import re"
    assert answer["message"] == (
        "Added 3 imports: import re; from collections import Counter; "
        "from dataclasses import dataclass."
    )
    # Nothing is saved: the editor takes the text, the user saves it.
    assert metric.latest_version.source == PASTED
    broken = owner_client.post(f"/en/metrics/{metric.pk}/add-imports/", {"source": "def ("})
    assert broken.status_code == 400 and "Syntax error" in broken.json()["error"]


@pytest.mark.django_db
def test_another_users_metric_has_no_fix(client, outsider, metric):
    client.force_login(outsider)
    response = client.post(f"/en/metrics/{metric.pk}/add-imports/", {"source": PASTED})
    assert response.status_code == 404


@pytest.mark.django_db
def test_the_panel_of_a_check_that_failed_for_them_offers_the_fix(owner_client, owner, metric):
    version = metric.latest_version
    check = check_services.check_create(owner=owner, source=PASTED, metric_version=version)
    result = run_check(PASTED, timeout_s=10, sandbox_config=sandbox_pool.base_config())
    Check.objects.filter(pk=check.pk).update(status=Check.Status.FAILED, result=result.to_dict())
    body = owner_client.get(f"/en/metrics/{metric.pk}/?check={check.pk}").content.decode()
    assert "3 names are used but never imported: dataclass, Counter, re." in body
    assert "Counter is used but never imported: add `from collections import Counter`." in body
    panel = body[body.index('id="check"') :]
    offer = panel[panel.index('class="add-imports-offer"') :]
    assert offer.index("Add the 3 missing imports") < offer.index("</p>")
    assert f'data-url="/en/metrics/{metric.pk}/add-imports/"' in offer
