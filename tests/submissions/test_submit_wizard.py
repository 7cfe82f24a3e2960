"""The submit wizard through the test client: every step's validation, uploads good and
bad, the contract check as the gate, invalidation, submit, the run and its bundle."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import pytest
from django.core.files.uploadhandler import StopUpload
from django.test import Client

from checks import execution
from checks.models import Check
from metrics import services as metric_services
from runs.models import Run
from submissions import datasets, rules, services
from submissions.models import Dataset, Draft
from submissions.uploads import SizeLimitHandler

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}

CSV = (
    "ticket_id,question,label\n"
    "T-1,I was charged twice for my subscription this month.,billing\n"
    "T-2,The app crashes when I open the settings page.,bug\n"
    "T-3,How do I change my email address?,account\n"
    "T-4,My card was declined but the money left my account.,billing\n"
    "T-5,The export button does nothing.,bug\n"
    "T-6,Can I get an invoice for last month?,billing\n"
    "T-7,I forgot my password.,account\n"
    "T-8,Search results never load.,bug\n"
    "T-9,Please delete my account.,account\n"
    "T-10,What is the capital of France?,\n"
)

LABEL_METRIC = """def score(input, output, expected=None):
    if expected is None:
        return 0.0, {"feedback": "This case has no expected label, so the output could not be checked."}
    want = str(expected["label"]).strip().lower()
    got = str(output).strip().lower()
    if want in got:
        return 1.0, {"feedback": f"Correct: the label is {want!r}."}
    return 0.0, {"feedback": f"Expected {want!r}, got {got!r} for {input['question']!r}."}
"""

KEYWORD_PROGRAM = """def run(artifact, input):
    text = input["question"].lower()
    for label, words in (("billing", ("charge", "card", "invoice")), ("bug", ("crash", "nothing", "load"))):
        if any(word in text for word in words):
            return label
    return "account"
"""

DSPY_PROGRAM = """import dspy

program = dspy.Predict("question -> label")
"""

MODEL_PROGRAM = """from skynet import llm

def run(artifact, input):
    return llm(artifact, input="Answer: " + input["question"])
"""


def url(draft: Draft, step: str) -> str:
    return f"/en/submit/{draft.pk}/{step}/"


def artifact_data(kind="python", content="", source=KEYWORD_PROGRAM, action="next") -> dict:
    return {
        "artifact_kind": kind,
        "artifact_content": content,
        "program_source": source,
        "action": action,
    }


def upload(client, draft, data: bytes, name: str = "tickets.csv", **extra):
    return client.post(f"/en/submit/{draft.pk}/upload/", {"file": _named(data, name)}, **extra)


def _named(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def dataset_data(columns, roles: dict, action="next", **splits) -> dict:
    data = {
        "split_mode": "ratio",
        "train_percent": 60,
        "validation_percent": 20,
        "test_percent": 20,
        "seed": 7,
        "split_column": "",
        "action": action,
    }
    for index, column in enumerate(columns):
        data[f"role_{index}"] = roles.get(column, "ignore")
    data.update(splits)
    return data


def models_data(**changes) -> dict:
    data = {
        "task_model": "openai/test-gpt",
        "reflection_model": "openai/test-gpt",
        "metric_model": "",
        "engine": "auto",
        "budget": 300,
        "action": "next",
    }
    data.update(changes)
    return data


def fill_to_models(
    client, draft, saved_metric, *, source=KEYWORD_PROGRAM, kind="python", content=""
) -> None:
    """Steps 1 to 3 with valid input."""
    assert (
        client.post(url(draft, "artifact"), artifact_data(kind, content, source)).status_code == 302
    )
    assert upload(client, draft, CSV.encode()).status_code == 302
    draft.refresh_from_db()
    roles = {"ticket_id": "ignore", "question": "input", "label": "output"}
    response = client.post(url(draft, "dataset"), dataset_data(draft.dataset.columns, roles))
    assert response.status_code == 302, response.content.decode()
    response = client.post(
        url(draft, "metric"),
        {"metric_mode": "saved", "metric_version": saved_metric.pk, "action": "next"},
    )
    assert response.status_code == 302


def fill_to_check(
    client, draft, saved_metric, *, source=KEYWORD_PROGRAM, kind="python", content=""
):
    """Steps 1 to 4 with valid input; returns the draft."""
    fill_to_models(client, draft, saved_metric, source=source, kind=kind, content=content)
    response = client.post(url(draft, "models"), models_data())
    assert response.status_code == 302, response.content.decode()
    assert response["Location"] == url(draft, "check")
    draft.refresh_from_db()
    return draft


def run_check_now(client, draft, django_capture_on_commit_callbacks) -> Check:
    """Start the check from the page, then run it as the worker's task does."""
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(f"/en/submit/{draft.pk}/check/run/")
    assert response.status_code == 302
    draft.refresh_from_db()
    execution.execute_check(draft.contract_check.pk)
    draft.contract_check.refresh_from_db()
    return draft.contract_check


# -- the whole way -----------------------------------------------------------------


def test_the_whole_wizard_without_javascript_ends_in_a_queued_run(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    page = owner_client.get(url(draft, "check")).content.decode()
    assert "Run the contract check" in page
    assert 'id="to-review" disabled' in page

    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.status == Check.Status.PASSED, check.result
    assert check.artifact["kind"] == "python" and check.task_model == "openai/test-gpt"
    rows = check.result["cases"]
    assert len(rows) == 3
    assert all(row["run"]["status"] == "ok" for row in rows)
    # The parent measured each run, so the metric saw a real duration.
    assert all(row["observation"]["duration_ms"] > 0 for row in rows)
    # The sample comes from train rows that have an expected label.
    sample = datasets.sample_indices(draft)
    assert set(sample) <= set(datasets.draft_splits(draft)["train"])
    assert all(check.cases[i]["expected"] is not None for i in range(3))

    page = owner_client.get(url(draft, "check")).content.decode()
    assert "Contract check passed" in page
    assert f'href="{url(draft, "review")}"' in page
    review = owner_client.get(url(draft, "review")).content.decode()
    assert "tickets.csv" in review and "openai/test-gpt" in review
    assert "GEPA" in review and "(chosen by Auto)" in review
    assert "300 metric calls" in review
    assert 'id="submit-run"' in review and 'id="submit-run" disabled' not in review

    response = owner_client.post(f"/en/submit/{draft.pk}/submit/", {"name": "  tickets  v1 "})
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/en/runs/{run.pk}/"
    assert run.status == Run.Status.QUEUED and run.name == "tickets v1"
    assert run.contract_check == check and run.dataset == draft.dataset
    assert run.metric_source == LABEL_METRIC and run.metric_version == saved_metric
    assert run.config["engine"] == {"chosen": "auto", "resolved": "gepa"}
    assert run.config["dataset"]["columns"] == {
        "ticket_id": "ignore",
        "question": "input",
        "label": "output",
    }
    assert sum(run.config["dataset"]["splits"]["counts"].values()) == 10

    listing = owner_client.get("/en/runs/").content.decode()
    assert f'href="/en/runs/{run.pk}/"' in listing and "Queued" in listing
    detail = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "Download the bundle (zip)" in detail
    # A submitted draft is closed: its steps lead to the run.
    again = owner_client.get(url(draft, "artifact"))
    assert again.status_code == 302 and again["Location"] == f"/en/runs/{run.pk}/"
    assert owner_client.post(f"/en/submit/{draft.pk}/submit/")["Location"] == f"/en/runs/{run.pk}/"
    assert Run.objects.count() == 1


def test_the_bundle_holds_what_the_run_uses_and_a_working_dspy_metric(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks, tmp_path
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    run = Run.objects.get()
    response = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    assert response["Content-Type"] == "application/zip"
    assert f"skynet-run-{run.pk}.zip" in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = set(archive.namelist())
    assert {"metric.py", "run.json", "dataset.csv", "check-report.json", "program.py"} <= names
    assert {"dspy_metric.py", "skynet/dspy_adapter.py", "skynet/returns.py"} <= names
    assert archive.read("metric.py").decode() == LABEL_METRIC
    assert archive.read("dataset.csv") == CSV.encode()  # byte for byte
    assert archive.read("program.py").decode() == KEYWORD_PROGRAM
    config = json.loads(archive.read("run.json"))
    assert config == run.config
    report = json.loads(archive.read("check-report.json"))
    assert report["status"] == "passed" and report["result"]["passed"] is True

    # The adapter, as bundled, is a DSPy GEPA metric: metric(gold, pred, trace, ...).
    archive.extractall(tmp_path)
    script = (
        "import dspy\n"
        "from dspy_metric import metric\n"
        "gold = dspy.Example(question='The app crashes.', label='bug').with_inputs('question')\n"
        "good = metric(gold, dspy.Prediction(label='bug'), None, None, None)\n"
        "bad = metric(gold, dspy.Prediction(label='billing'), None, 'predict', None)\n"
        "print(good.score, good.feedback)\n"
        "print(bad.score, bad.feedback)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    good, bad = result.stdout.strip().splitlines()
    assert good == "1.0 Correct: the label is 'bug'."
    assert bad == "0.0 Expected 'bug', got 'billing' for 'The app crashes.'."


def test_a_prompt_template_runs_on_the_task_model(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    template = "Classify this support ticket: {question}"
    fill_to_check(owner_client, draft, saved_metric, kind="prompt", content=template, source="")
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.status == Check.Status.PASSED, check.result
    sent = [r for r in session_models.requests if "Classify this support ticket" in r.user]
    assert len(sent) >= 3
    rows = check.result["cases"]
    assert all(row["run"]["usage"]["model_calls"] == 1 for row in rows)
    assert all(row["observation"]["model_calls"] == 1 for row in rows)
    assert all(row["observation"]["cost_usd"] > 0 for row in rows)
    page = owner_client.get(url(draft, "check")).content.decode()
    assert "FAIL The capital of France is Paris" in page  # the task model's answer, shown


MEASURING_METRIC = """from skynet import observation, reward, service_cost

REWARD_SPEC = {
    "weights": {"accuracy": 0.5, "speed": 0.25, "cost": 0.25},
    "accuracy": {},
    "speed": {"reference": 10**9},
    "cost": {"reference": 1.0},
}


def score(input, output, expected=None):
    seen = observation()
    value, info = reward(REWARD_SPEC, 1.0, "ok")
    info["feedback"] = (
        f"duration_ms={seen['duration_ms']} cost={service_cost()} calls={seen['model_calls']}"
    )
    return value, info
"""


def test_the_metric_sees_the_runs_measured_time_and_cost(
    owner_client, owner, draft, session_models, django_capture_on_commit_callbacks
):
    metric = metric_services.metric_create(owner=owner, name="measured", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=MEASURING_METRIC)
    template = "Classify: {question}"
    fill_to_check(owner_client, draft, version, kind="prompt", content=template, source="")
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.status == Check.Status.PASSED, check.result
    for row in check.result["cases"]:
        run = row["run"]
        # What the metric printed is what the parent measured for the run.
        duration, cost, calls = (part.split("=")[1] for part in row["feedback"].split())
        assert float(duration) == pytest.approx(run["duration_ms"]) and float(duration) > 0
        assert float(cost) == pytest.approx(run["usage"]["cost_usd"]) and float(cost) > 0
        assert calls == "1"
        # reward() scored speed and cost from those numbers, not from missing ones.
        assert row["scores"]["speed"] == 1.0 and row["scores"]["cost"] == 1.0
        assert row["score"] == 1.0


def test_a_dspy_program_goes_to_dspy_gepa(owner_client, draft, saved_metric, session_models):
    fill_to_check(owner_client, draft, saved_metric, kind="dspy", source=DSPY_PROGRAM)
    draft.refresh_from_db()
    assert rules.resolved_engine(draft) == "dspy_gepa"
    wrong = owner_client.post(url(draft, "models"), models_data(engine="gepa"))
    assert "GEPA cannot optimize this artifact kind" in wrong.content.decode()


# -- step by step validation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (artifact_data("prompt", "", ""), "Write the prompt template."),
        (artifact_data("prompt", "Answer {question.text}", ""), "{question.text}"),
        (
            artifact_data("python", "", "def answer(a, b):\n    return 1\n"),
            "does not define a function named run",
        ),
        (artifact_data("python", "", "def run(a, b:\n"), "program.py"),
        (artifact_data("dspy", "", ""), "Write program.py: define program, an instance of"),
        (
            artifact_data("dspy", "", "import dspy\nqa = dspy.Predict('q -> a')\n"),
            "does not define program, an instance of a dspy.Module",
        ),
    ],
)
def test_the_artifact_step_names_the_problem(owner_client, draft, data, message):
    response = owner_client.post(url(draft, "artifact"), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert message in body
    assert "Fix the fields marked below." in body


def test_back_keeps_input_that_did_not_validate(owner_client, draft):
    broken = "def run(artifact, input:\n    return 1\n"
    owner_client.post(url(draft, "artifact"), artifact_data(source=broken, action="save"))
    draft.refresh_from_db()
    assert draft.unsaved["artifact"]["program_source"] == broken
    page = owner_client.get(url(draft, "artifact")).content.decode()
    assert "def run(artifact, input:" in page  # shown again, with its error
    assert "errorlist" in page
    owner_client.post(url(draft, "artifact"), artifact_data())
    draft.refresh_from_db()
    assert draft.program_source == KEYWORD_PROGRAM and "artifact" not in draft.unsaved


def test_a_draft_resumes_where_it_was_left(owner_client, draft):
    assert owner_client.get(f"/en/submit/{draft.pk}/")["Location"] == url(draft, "artifact")
    owner_client.post(url(draft, "artifact"), artifact_data())
    assert owner_client.get(f"/en/submit/{draft.pk}/")["Location"] == url(draft, "dataset")
    listing = owner_client.get("/en/submit/").content.decode()
    assert f'href="/en/submit/{draft.pk}/"' in listing


def test_htmx_submit_sends_the_browser_to_the_run(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    # The check and review steps are not forms of their own.
    assert owner_client.post(url(draft, "review")).status_code == 405
    response = owner_client.post(f"/en/submit/{draft.pk}/submit/", **HTMX)
    assert response["HX-Redirect"] == f"/en/runs/{Run.objects.get().pk}/"


def test_later_steps_wait_for_earlier_ones(owner_client, draft):
    response = owner_client.get(url(draft, "models"))
    assert response.status_code == 302 and response["Location"] == url(draft, "artifact")
    assert owner_client.get(url(draft, "nope")).status_code == 404


def test_htmx_steps_swap_the_wizard_and_push_the_url(owner_client, draft):
    response = owner_client.post(url(draft, "artifact"), artifact_data(), **HTMX)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == url(draft, "dataset")
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="wizard"')
    assert "<html" not in body
    bad = owner_client.post(url(draft, "artifact"), artifact_data("prompt", "", ""), **HTMX)
    assert bad.status_code == 400 and "Write the prompt template." in bad.content.decode()


def test_dataset_preview_roles_and_counts(owner_client, draft):
    owner_client.post(url(draft, "artifact"), artifact_data())
    response = upload(owner_client, draft, CSV.encode())
    assert response.status_code == 302
    draft.refresh_from_db()
    # Roles start from the names: ids ignored, label as Output.
    assert draft.roles == {"ticket_id": "ignore", "question": "input", "label": "output"}
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert "10 rows" in page and "I was charged twice" in page
    assert '<option value="output" selected>' in page
    # No Input column.
    roles = {"ticket_id": "ignore", "question": "ignore", "label": "output"}
    bad = owner_client.post(url(draft, "dataset"), dataset_data(draft.dataset.columns, roles))
    assert bad.status_code == 400 and "Mark at least one column as Input." in bad.content.decode()
    # Ratios that do not add up.
    roles = {"question": "input", "label": "output"}
    bad = owner_client.post(
        url(draft, "dataset"), dataset_data(draft.dataset.columns, roles, train_percent=90)
    )
    assert bad.status_code == 400 and "add up to 100" in bad.content.decode()
    # Too few train cases for the check.
    bad = owner_client.post(
        url(draft, "dataset"),
        dataset_data(
            draft.dataset.columns, roles, train_percent=20, validation_percent=40, test_percent=40
        ),
    )
    assert "The train split has 2 cases; the contract check needs 3." in bad.content.decode()
    good = owner_client.post(url(draft, "dataset"), dataset_data(draft.dataset.columns, roles))
    assert good.status_code == 302
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert 'id="split-counts"' in page
    draft.refresh_from_db()
    assert (
        datasets.draft_splits(draft)
        and sum(len(v) for v in datasets.draft_splits(draft).values()) == 10
    )


def test_splits_from_a_split_column(owner_client, draft):
    owner_client.post(url(draft, "artifact"), artifact_data())
    text = "question,label,split\n" + "".join(
        f"q{i},a{i},{'train' if i < 4 else 'test' if i < 6 else 'Validation'}\n" for i in range(8)
    )
    upload(owner_client, draft, text.encode(), name="qa.csv")
    draft.refresh_from_db()
    assert draft.split_mode == "column" and draft.split_column == "split"
    assert draft.roles["split"] == "ignore"
    assert datasets.draft_splits(draft) == {
        "train": [0, 1, 2, 3],
        "validation": [6, 7],
        "test": [4, 5],
    }
    roles = {"question": "input", "label": "output", "split": "input"}
    bad = owner_client.post(
        url(draft, "dataset"),
        dataset_data(draft.dataset.columns, roles, split_mode="column", split_column="split"),
    )
    assert "Mark the split column as ignored" in bad.content.decode()


def test_the_metric_step(owner_client, draft, saved_metric, outsider):
    other = metric_services.metric_create(owner=outsider, name="theirs", starter="exact_match")
    page = owner_client.get(url(draft, "metric"))
    # Not reachable yet: the artifact is missing.
    assert page.status_code == 302
    owner_client.post(url(draft, "artifact"), artifact_data())
    upload(owner_client, draft, CSV.encode())
    draft.refresh_from_db()
    owner_client.post(
        url(draft, "dataset"),
        dataset_data(draft.dataset.columns, {"question": "input", "label": "output"}),
    )
    body = owner_client.get(url(draft, "metric")).content.decode()
    # Grouped by metric since each version's label no longer names it (a flat list of
    # "name, version N" told neither same-named metrics nor verdicts apart).
    assert '<optgroup label="labels">' in body and "Version 2: not checked" in body
    assert "theirs" not in body
    # Another user's version is not a choice.
    response = owner_client.post(
        url(draft, "metric"),
        {"metric_mode": "saved", "metric_version": other.latest_version.pk, "action": "next"},
    )
    assert response.status_code == 400
    inline = owner_client.post(
        url(draft, "metric"),
        {"metric_mode": "inline", "inline_source": "def score(input):\n    return 1\n"},
    )
    assert inline.status_code == 400
    assert "score must accept (input, output)" in inline.content.decode()
    good = owner_client.post(
        url(draft, "metric"),
        {"metric_mode": "inline", "inline_source": LABEL_METRIC, "action": "next"},
    )
    assert good.status_code == 302
    draft.refresh_from_db()
    assert rules.metric_source(draft) == LABEL_METRIC


def test_an_inline_metric_is_diagnosed_while_typed(owner_client, draft):
    found = owner_client.post(
        f"/en/submit/{draft.pk}/diagnostics/", {"source": "def score(input):\n    return 1\n"}
    ).json()["diagnostics"]
    assert [d["code"] for d in found] == ["bad_signature"]
    assert found[0]["line"] == 1 and "score must accept (input, output)" in found[0]["message"]


def test_the_models_step(owner_client, draft, saved_metric, session_models):
    owner_client.post(url(draft, "artifact"), artifact_data())
    upload(owner_client, draft, CSV.encode())
    draft.refresh_from_db()
    owner_client.post(
        url(draft, "dataset"),
        dataset_data(draft.dataset.columns, {"question": "input", "label": "output"}),
    )
    owner_client.post(
        url(draft, "metric"), {"metric_mode": "saved", "metric_version": saved_metric.pk}
    )
    missing = owner_client.post(
        url(draft, "models"), models_data(task_model="", reflection_model="")
    )
    body = missing.content.decode()
    assert missing.status_code == 400
    assert "Pick the task model." in body and "Pick the reflection model." in body
    unconfigured = owner_client.post(
        url(draft, "models"), models_data(task_model="anthropic/test-claude")
    )
    assert "set the environment variable ANTHROPIC_API_KEY" in unconfigured.content.decode()
    wrong_engine = owner_client.post(url(draft, "models"), models_data(engine="dspy_gepa"))
    assert "DSPy GEPA cannot optimize this artifact kind" in wrong_engine.content.decode()
    budget = owner_client.post(url(draft, "models"), models_data(budget=0))
    assert budget.status_code == 400
    assert owner_client.post(url(draft, "models"), models_data()).status_code == 302


# -- bad uploads ---------------------------------------------------------------------


def _ready_for_upload(owner_client, draft):
    owner_client.post(url(draft, "artifact"), artifact_data())
    upload(owner_client, draft, CSV.encode())
    draft.refresh_from_db()
    return draft.dataset


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"", "empty.csv", "The file is empty."),
        (b"a,b\n1,2\n3,4,5\n", "ragged.csv", "Row 3 has 3 cells; the header has 2 columns."),
        (b'{"q": 1}\n{"q": 2,}\n', "bad.jsonl", "Line 2 is not valid JSON"),
        (b"PK\x03\x04" + b"\x00" * 100, "book.xlsx", "an Excel workbook or a zip archive"),
        (b"\xff\xfe\x00\xd8\x00\xd8" * 20, "broken.csv", "encoding could not be recognized"),
    ],
)
def test_a_bad_upload_is_refused_clearly_and_loses_nothing(
    owner_client, draft, data, name, message
):
    before = _ready_for_upload(owner_client, draft)
    response = upload(owner_client, draft, data, name=name)
    assert response.status_code == 400
    assert message in response.content.decode()
    draft.refresh_from_db()
    assert draft.dataset == before  # the earlier dataset stays
    assert Dataset.objects.count() == 1


def test_a_file_over_the_limit_is_refused_before_it_is_read(owner_client, draft):
    before = _ready_for_upload(owner_client, draft)
    big = b"question,label\n" + b"x" * (50 * 1024 * 1024)
    response = upload(owner_client, draft, big, name="huge.csv")
    assert response.status_code == 400
    assert "The file is 50.0" in response.content.decode()
    assert "the limit is 20.0" in response.content.decode()
    assert not response.wsgi_request.FILES  # stopped at the limit, never stored whole
    draft.refresh_from_db()
    assert draft.dataset == before


def test_the_upload_keeps_its_csrf_check_and_its_limit_with_the_check_on(owner, draft):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    client.get(url(draft, "artifact"))  # a page with a form sets the token's cookie
    token = client.cookies["csrftoken"].value
    assert upload(client, draft, CSV.encode()).status_code == 403
    # The page's form sends the token before the file, so it is read before the limit.
    big = b"question,label\n" + b"x" * (21 * 1024 * 1024)
    response = client.post(
        f"/en/submit/{draft.pk}/upload/",
        {"csrfmiddlewaretoken": token, "file": _named(big, "h.csv")},
    )
    assert response.status_code == 400
    assert "the limit is 20.0" in response.content.decode()
    assert not response.wsgi_request.FILES
    assert Dataset.objects.count() == 0


def test_the_size_limit_stops_the_upload_where_the_file_passes_it():
    handler = SizeLimitHandler(limit=10)
    handler.handle_raw_input(None, {}, 100, b"--b")
    handler.new_file("file", "a.csv", "text/csv", None)
    assert handler.receive_data_chunk(b"x" * 10, 0) == b"x" * 10
    assert handler.refused_size is None
    with pytest.raises(StopUpload) as stopped:
        handler.receive_data_chunk(b"x", 10)
    assert handler.refused_size == 100
    assert not stopped.value.connection_reset  # the rest is read, the answer gets through


def test_a_file_in_another_encoding_is_read_with_a_warning(owner_client, draft):
    _ready_for_upload(owner_client, draft)
    text = "question,label\nCafé crème?,menú\nÀ bientôt,señal\nNaïve résumé,año\n"
    response = upload(owner_client, draft, text.encode("cp1252"), name="latin.csv")
    assert response.status_code == 302
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert "The file is not UTF-8; it was read as" in page
    assert "Café crème?" in page


def test_formula_like_cells_stay_text_and_are_flagged(owner_client, draft):
    _ready_for_upload(owner_client, draft)
    text = 'question,label\n"=HYPERLINK(""http://x"")",a\n+1+2,b\nfine,c\n'
    assert upload(owner_client, draft, text.encode(), name="f.csv").status_code == 302
    draft.refresh_from_db()
    assert draft.dataset.rows[0]["question"] == '=HYPERLINK("http://x")'  # never evaluated
    page = owner_client.get(url(draft, "dataset")).content.decode()
    assert "2 cells start like a spreadsheet formula" in page
    assert "<a href" not in page.split('class="preview"')[1].split("</table>")[0]


# -- the gate --------------------------------------------------------------------------


def test_any_change_invalidates_the_check_and_shuts_submit(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    draft.refresh_from_db()
    assert rules.check_state(draft) == "passed"
    # Engine and budget are not what the check ran: changing them keeps it.
    owner_client.post(url(draft, "models"), models_data(budget=50, engine="gepa", action="save"))
    draft.refresh_from_db()
    assert rules.check_state(draft) == "passed"

    changed = KEYWORD_PROGRAM.replace('return "account"', 'return "other"')
    owner_client.post(url(draft, "artifact"), artifact_data(source=changed, action="save"))
    draft.refresh_from_db()
    assert rules.check_state(draft) == "stale"
    page = owner_client.get(url(draft, "check")).content.decode()
    assert "Changed since the last check: the artifact. Run the check again." in page
    assert 'id="to-review" disabled' in page
    review = owner_client.get(url(draft, "review"))
    assert review.status_code == 302 and review["Location"] == url(draft, "check")
    refused = owner_client.post(f"/en/submit/{draft.pk}/submit/")
    assert refused.status_code == 302 and Run.objects.count() == 0

    # Each of dataset, roles, metric and models changes the fingerprint too, and the
    # page names what changed.
    before = rules.fingerprint(draft)
    draft.roles = {**draft.roles, "ticket_id": "input"}
    assert rules.fingerprint(draft) != before
    assert ("role", {"column": "ticket_id"}) in rules.DraftState(draft).changes
    draft.refresh_from_db()
    draft.seed = 99
    assert rules.fingerprint(draft) != before
    draft.refresh_from_db()
    draft.task_model = "local/free"
    assert rules.fingerprint(draft) != before
    draft.refresh_from_db()
    draft.metric_mode, draft.inline_source = "inline", LABEL_METRIC + "\n"
    assert rules.fingerprint(draft) != before


def test_a_failed_check_keeps_submit_shut(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    crashing = "def run(artifact, input):\n    return 1 / 0\n"
    fill_to_check(owner_client, draft, saved_metric, source=crashing)
    check = run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    assert check.status == Check.Status.FAILED
    assert check.result["cases"][0]["problem"] == "run_error"
    page = owner_client.get(url(draft, "check")).content.decode()
    assert "Contract check failed" in page and "program.py:2" in page
    assert 'id="to-review" disabled' in page
    assert owner_client.post(f"/en/submit/{draft.pk}/submit/").status_code == 302
    assert Run.objects.count() == 0


def test_the_gate_partial_follows_the_check(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    shut = owner_client.get(f"/en/submit/{draft.pk}/check/gate/", **HTMX).content.decode()
    assert 'id="to-review" disabled' in shut
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    final = owner_client.get(f"/en/checks/{draft.contract_check.pk}/?partial=panel", **HTMX)
    assert final.status_code == 286
    assert "skynet:check-final" in final["HX-Trigger"]
    opened = owner_client.get(f"/en/submit/{draft.pk}/check/gate/", **HTMX).content.decode()
    assert f'href="{url(draft, "review")}"' in opened


# -- ownership -------------------------------------------------------------------------


def test_another_users_draft_and_run_are_404(
    client,
    owner_client,
    outsider,
    draft,
    saved_metric,
    session_models,
    django_capture_on_commit_callbacks,
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    run = Run.objects.get()
    other = services.draft_create(owner=draft.owner)
    client.force_login(outsider)
    for path in (
        url(other, "artifact"),
        url(other, "check"),
        f"/en/submit/{other.pk}/check/gate/",
        f"/en/submit/{other.pk}/bundle.zip",
        f"/en/runs/{run.pk}/",
        f"/en/runs/{run.pk}/bundle.zip",
    ):
        assert client.get(path).status_code == 404, path
    for path in (
        url(other, "artifact"),
        f"/en/submit/{other.pk}/upload/",
        f"/en/submit/{other.pk}/check/run/",
        f"/en/submit/{other.pk}/submit/",
        f"/en/submit/{other.pk}/delete/",
    ):
        assert client.post(path, artifact_data()).status_code == 404, path
    assert Draft.objects.filter(pk=other.pk).exists()
    assert "theirs" not in client.get("/en/runs/").content.decode()
    assert run.name not in client.get("/en/runs/").content.decode()


def test_a_draft_is_deleted_until_it_is_submitted(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    spare = services.draft_create(owner=draft.owner)
    response = owner_client.post(f"/en/submit/{spare.pk}/delete/", follow=True)
    assert "Draft deleted." in response.content.decode()
    assert not Draft.objects.filter(pk=spare.pk).exists()
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    response = owner_client.post(f"/en/submit/{draft.pk}/delete/", follow=True)
    assert "Draft deleted." not in response.content.decode()
    assert Draft.objects.filter(pk=draft.pk).exists() and Run.objects.get().draft_id == draft.pk


def test_a_step_page_works_its_draft_out_once_and_writes_nothing(
    owner_client,
    draft,
    saved_metric,
    session_models,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    """One DraftState per request: the review page, which needs every step's problems,
    the check's state and the run's summary, parses the metric once, and a read never
    UPDATEs the draft (even when its stored dataset facts are out of date)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    parsed = []
    real = rules.static_check
    monkeypatch.setattr(rules, "static_check", lambda source: parsed.append(1) or real(source))
    with CaptureQueriesContext(connection) as queries:
        page = owner_client.get(url(draft, "review"))
    assert page.status_code == 200 and len(parsed) == 1
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert [w for w in writes if "submissions_draft" in w] == []

    Draft.objects.filter(pk=draft.pk).update(dataset_facts={})
    with CaptureQueriesContext(connection) as queries:
        assert owner_client.get(url(draft, "review")).status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert [w for w in writes if "submissions_draft" in w] == []
