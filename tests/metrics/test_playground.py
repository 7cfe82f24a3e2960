"""The playground's views and partials, through Django's test client."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from checks import services as check_services
from checks.models import Check
from contract.engine import run_check
from metrics import services as metric_services
from metrics.models import Metric, MetricVersion
from metrics.starters import EXACT_MATCH, STARTERS

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(owner=owner, name="ticket labels", starter="exact_match")


def editor_data(source: str = EXACT_MATCH, *, action: str = "save", **changes) -> dict:
    data = {"source": source, "timeout_s": "20", "action": action}
    for index, case in enumerate(STARTERS["exact_match"].cases):
        data[f"case{index}-input"] = json.dumps({"question": f"q{index}"})
        data[f"case{index}-output_kind"] = "text"
        data[f"case{index}-output"] = case["output"]
        data[f"case{index}-expected"] = '{"label": "billing"}'
        data[f"case{index}-observation"] = ""
    data.update(changes)
    return data


def test_creating_a_metric_from_a_starter_makes_version_1_with_fitting_cases(owner_client, owner):
    response = owner_client.post(
        "/en/metrics/new/", {"name": "json fields", "starter": "several_checks"}
    )
    metric = Metric.objects.get(owner=owner)
    assert response.status_code == 302
    assert response["Location"] == f"/en/metrics/{metric.pk}/"
    assert metric.latest_version.number == 1
    assert "json.loads(output)" in metric.latest_version.source
    assert metric.cases[0]["expected"] == {"fields": ["number", "vendor", "due", "total"]}


def test_the_playground_shows_the_editor_cases_and_reference_table(owner_client, metric):
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert "data-skynet-editor" in body
    assert "want = expected[&quot;label&quot;]" in body
    assert 'name="case2-expected"' in body
    assert "No. The side info is not a dict." in body  # the docs' reference table
    assert "No check yet." in body


def test_saving_a_changed_source_makes_a_new_version_and_keeps_the_old(owner_client, metric):
    changed = EXACT_MATCH.replace("Correct.", "Correct label.")
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", editor_data(changed))
    assert response.status_code == 302
    numbers = list(metric.versions.order_by("number").values_list("number", flat=True))
    assert numbers == [1, 2]
    assert MetricVersion.objects.get(metric=metric, number=1).source == EXACT_MATCH
    assert "Correct label." in metric.latest_version.source
    metric.refresh_from_db()
    assert metric.timeout_s == 20
    assert metric.cases[0]["input"] == {"question": "q0"}


def test_saving_the_same_source_makes_no_new_version(owner_client, metric):
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", editor_data(), follow=True)
    assert metric.versions.count() == 1
    assert "No changes since version 1." in response.content.decode()


def test_htmx_save_returns_the_status_partial_and_an_event(owner_client, metric):
    changed = EXACT_MATCH + "\n# tweak\n"
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", editor_data(changed), **HTMX)
    body = response.content.decode()
    assert response.status_code == 200
    assert '<span id="save-status"' in body and "Version 2" in body
    assert "<html" not in body
    assert "skynet:saved" in response["HX-Trigger"]


def test_bad_json_in_a_case_shows_a_field_error_and_loses_nothing(owner_client, metric):
    data = editor_data(EXACT_MATCH + "\n# unsaved edit\n", **{"case1-input": '{"question": '})
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert "Not valid JSON (line 1, column 13)." in body
    assert "# unsaved edit" in body  # the editor text comes back as typed
    assert "{&quot;question&quot;:" in body
    assert metric.versions.count() == 1


def test_a_case_input_must_be_an_object(owner_client, metric):
    response = owner_client.post(
        f"/en/metrics/{metric.pk}/save/", editor_data(**{"case0-input": "[1, 2]"})
    )
    assert response.status_code == 400
    assert "Enter a JSON object" in response.content.decode()


def test_json_output_and_empty_expected_are_stored_as_such(owner_client, metric):
    data = editor_data(
        **{"case2-output_kind": "json", "case2-output": '{"a": 1}', "case2-expected": ""}
    )
    owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    metric.refresh_from_db()
    assert metric.cases[2]["output"] == {"a": 1}
    assert metric.cases[2]["expected"] is None


def test_running_saves_then_queues_a_check_on_commit(
    owner_client, metric, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = owner_client.post(
            f"/en/metrics/{metric.pk}/save/", editor_data(action="run"), **HTMX
        )
    check = Check.objects.get()
    assert len(callbacks) == 1  # the task is enqueued only once the row is committed
    assert check.status == Check.Status.QUEUED
    assert check.metric_version == metric.latest_version
    assert check.cases[0]["input"] == {"question": "q0"}
    body = response.content.decode()
    assert "Contract check queued" in body
    # A young check's panel asks at once, and the server answers when the check changes.
    assert f'hx-get="/en/checks/{check.pk}/?partial=panel&amp;since=queued.0&amp;history=1"' in body
    assert 'hx-trigger="load"' in body


def test_running_without_javascript_redirects_to_the_result(owner_client, metric):
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", editor_data(action="run"))
    check = Check.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/en/metrics/{metric.pk}/?check={check.pk}#check"


def test_a_result_link_shows_only_a_check_of_this_metric(owner, owner_client, metric):
    other = metric_services.metric_create(owner=owner, name="other", starter="exact_match")
    owner_client.post(f"/en/metrics/{other.pk}/save/", editor_data(action="run"))
    theirs = Check.objects.get()
    assert owner_client.get(f"/en/metrics/{other.pk}/?check={theirs.pk}").status_code == 200
    # The same user's check, but of another metric: not this page's to show.
    assert owner_client.get(f"/en/metrics/{metric.pk}/?check={theirs.pk}").status_code == 404


def _finish(check: Check, source: str = EXACT_MATCH) -> Check:
    result = run_check(source, timeout_s=10)
    check.status = Check.Status.PASSED if result.passed else Check.Status.FAILED
    check.result = result.to_dict()
    check.save()
    return check


def test_the_live_partial_polls_until_the_check_is_final(owner_client, owner, metric):
    check = check_services.check_create(
        owner=owner, source=EXACT_MATCH, metric_version=metric.latest_version
    )
    url = f"/en/checks/{check.pk}/?partial=panel"
    running = owner_client.get(url, **HTMX)
    assert running.status_code == 200
    assert f"?partial=panel&amp;since={check.live_token}" in running.content.decode()
    # A check that has waited long is asked about on a timer, less and less often.
    Check.objects.filter(pk=check.pk).update(created_at=check.created_at - timedelta(minutes=2))
    slow = owner_client.get(url, **HTMX).content.decode()
    assert 'hx-trigger="load delay:5000ms"' in slow
    _finish(check)
    final = owner_client.get(url, **HTMX)
    assert final.status_code == 286  # htmx stops polling
    body = final.content.decode()
    assert "Contract check passed" in body
    assert "hx-trigger" not in body


def test_a_result_shows_stages_cases_reasons_and_hints(owner_client, owner, metric):
    source = "def score(input, output):\n    return 0.8, 'Close.'\n"
    check = _finish(check_services.check_create(owner=owner, source=source), source)
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "Contract check failed" in body
    assert "stage-culprit" in body and "Metric return value" in body
    assert body.count("No. The side info is not a dict.") >= 3
    assert "&#x27;Close.&#x27;" in body or "'Close.'" in body


def test_a_traceback_links_to_the_users_line(owner_client, owner):
    source = "def score(input, output, expected=None):\n    return 1 / 0\n"
    check = _finish(check_services.check_create(owner=owner, source=source), source)
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert 'class="trace-line" href="#L2" data-line="2"' in body
    assert "ZeroDivisionError" in body


def test_a_return_value_problem_shows_its_line_and_a_valid_example(owner_client, owner):
    source = (
        "def score(input, output, expected=None):\n"
        "    if output == 'other':\n"
        "        return 0.0, {}\n"
        "    return 0.8, 'Close.'\n"
    )
    check = _finish(check_services.check_create(owner=owner, source=source), source)
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert 'class="returned-at">Returned at <a class="trace-line" href="#L4" data-line="4"' in body
    assert body.count('href="#L4"') == 2 and body.count('href="#L3"') == 1
    # The return that keeps the contract, built from what each case returned.
    assert (
        "Return this instead: <code>return 0.8, {&quot;feedback&quot;: &quot;Close.&quot;}" in body
    )
    assert "Return this instead: <code>return 0.0, {&quot;feedback&quot;: &quot;...&quot;}" in body
    assert "No. There is no feedback string." in body
    assert 'class="docs-row">In the docs\' table: <code>(0.8, {})</code>' in body


def test_the_panel_notes_cut_output_printing_and_specific_feedback(owner_client, owner):
    source = (
        "def score(input, output, expected=None):\n"
        "    print('word ' * 20000)\n"
        "    want = expected['label']\n"
        "    if output == want:\n"
        "        return 1.0, {'feedback': 'Correct.'}\n"
        "    return 0.0, {'feedback': f'Expected {want!r}, got {output!r}.'}\n"
    )
    check = _finish(check_services.check_create(owner=owner, source=source), source)
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert body.count('<p class="output-cut">Cut: only the first 64.0') == 3
    assert "of the 97.7\xa0KB printed are shown." in body
    assert body.count('class="hint hint-printed_output"') == 3
    assert '<li class="note note-feedback_specific"><a href="#case-2">Case 2</a>: Specific' in body
    assert "hint-feedback_generic" not in body


def test_results_render_in_the_viewers_language(client, owner, metric):
    source = "def score(input, output):\n    return 0.8, 'Close.'\n"
    check = _finish(check_services.check_create(owner=owner, source=source), source)
    client.force_login(owner)
    body = client.get(f"/es/checks/{check.pk}/").content.decode()
    assert "No. La información adicional no es un dict." in body


def test_versions_list_view_diff_and_restore(owner_client, metric):
    owner_client.post(
        f"/en/metrics/{metric.pk}/save/", editor_data(EXACT_MATCH.replace("Correct.", "Right."))
    )
    listing = owner_client.get(f"/en/metrics/{metric.pk}/versions/").content.decode()
    assert "v1" in listing and "v2" in listing
    one = owner_client.get(f"/en/metrics/{metric.pk}/versions/1/").content.decode()
    assert "Correct." in one
    diff = owner_client.get(f"/en/metrics/{metric.pk}/diff/?a=1&b=2").content.decode()
    # Side by side: the changed line's old text on the left, its new text on the right.
    changed = re.search(r'<tr class="change">(.*?)</tr>', diff, re.S).group(1)
    old, new = changed.split('class="code new"')
    assert "Correct." in old and "Right." not in old
    assert "Right." in new and "Correct." not in new
    assert '<td class="ln">' in changed  # with line numbers
    response = owner_client.post(f"/en/metrics/{metric.pk}/versions/1/restore/", follow=True)
    assert "Version 1 restored as version 3." in response.content.decode()
    assert metric.latest_version.number == 3
    assert metric.latest_version.source == EXACT_MATCH


def test_diagnostics_report_problems_without_running_anything(owner_client, metric, tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\ndef score(a):\n    return 1\n"
    response = owner_client.post(f"/en/metrics/{metric.pk}/diagnostics/", {"source": source})
    (diagnostic,) = response.json()["diagnostics"]
    assert diagnostic["line"] == 2
    assert diagnostic["code"] == "bad_signature"
    assert "score must accept (input, output)" in diagnostic["message"]
    assert not marker.exists()


def test_diagnostics_for_a_syntax_error_and_a_bad_reward_spec(owner_client, metric):
    url = f"/en/metrics/{metric.pk}/diagnostics/"
    syntax = owner_client.post(url, {"source": "def score(:\n"}).json()["diagnostics"]
    assert syntax[0]["code"] == "syntax_error" and syntax[0]["line"] == 1
    spec = "REWARD_SPEC = {'weights': {'accuracy': -1}}\ndef score(i, o):\n    pass\n"
    codes = [d["code"] for d in owner_client.post(url, {"source": spec}).json()["diagnostics"]]
    assert "weight_negative" in codes and "reference_missing" in codes


def test_an_import_the_sandbox_does_not_have_is_flagged_while_typing(owner_client, metric):
    """As the check says it at Load, on the import's line: not only once it runs."""
    source = (
        "import re\nimport torch\nfrom numpy import mean\n"
        "try:\n    import jax\nexcept ImportError:\n    jax = None\n\n"
        "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'ok'}\n"
    )
    url = f"/es/metrics/{metric.pk}/diagnostics/"
    (found,) = owner_client.post(url, {"source": source}).json()["diagnostics"]
    assert (found["code"], found["line"], found["severity"]) == ("module_not_available", 2, "error")
    assert "torch" in found["message"] and "numpy" in found["message"]
    assert "sandbox does not have" not in found["message"]  # in Spanish


def test_rate_limit_refuses_with_a_clear_message(owner_client, metric, settings):
    settings.CHECK_RATE_PER_MINUTE = 2
    settings.CHECK_MAX_ACTIVE_PER_USER = 100
    url = f"/en/metrics/{metric.pk}/save/"
    for _ in range(2):
        owner_client.post(url, editor_data(action="run"))
    response = owner_client.post(url, editor_data(action="run"), follow=True)
    assert Check.objects.count() == 2
    assert "You have started 2 checks in the last minute." in response.content.decode()


def test_concurrent_checks_are_capped(owner_client, metric, settings):
    settings.CHECK_MAX_ACTIVE_PER_USER = 1
    url = f"/en/metrics/{metric.pk}/save/"
    owner_client.post(url, editor_data(action="run"))
    response = owner_client.post(url, editor_data(action="run"), **HTMX)
    assert response.status_code == 429
    assert "You already have 1 checks queued or running." in response.content.decode()
    assert Check.objects.count() == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/en/metrics/{m}/"),
        ("post", "/en/metrics/{m}/save/"),
        ("post", "/en/metrics/{m}/diagnostics/"),
        ("get", "/en/metrics/{m}/versions/"),
        ("get", "/en/metrics/{m}/versions/1/"),
        ("post", "/en/metrics/{m}/versions/1/restore/"),
        ("get", "/en/metrics/{m}/diff/?a=1&b=1"),
        ("get", "/en/checks/{c}/"),
        ("get", "/en/checks/{c}/?partial=panel"),
    ],
)
def test_another_users_metric_and_checks_are_404(client, outsider, owner, metric, method, path):
    check = check_services.check_create(
        owner=owner, source=EXACT_MATCH, metric_version=metric.latest_version
    )
    client.force_login(outsider)
    url = path.format(m=metric.pk, c=check.pk)
    response = getattr(client, method)(url, editor_data(), **HTMX)
    assert response.status_code == 404
    assert metric.versions.count() == 1


def test_anonymous_users_are_sent_to_log_in(client, metric):
    response = client.get(f"/en/metrics/{metric.pk}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/en/accounts/login/")


def test_the_home_page_offers_to_start_from_a_dspy_or_gepa_metric(owner_client):
    body = owner_client.get("/en/").content.decode()
    assert 'id="start-from-framework"' in body
    assert 'href="/en/metrics/new/import/" id="start-from-framework"' in body
