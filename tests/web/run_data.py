"""A submitted run of tests.quiz's capitals prompt, made through the wizard's own views,
for the run tests: the session provider answers as quiz's task and reflection models."""

from __future__ import annotations

import contextlib

from checks import execution as check_execution
from metrics import services as metric_services
from submissions.models import Run
from tests import quiz
from tests.web.test_submit_wizard import dataset_data, models_data, upload, url


@contextlib.contextmanager
def quiz_models(provider):
    """The session provider answers as quiz's models while the block runs."""
    provider.respond = quiz.respond
    try:
        yield provider
    finally:
        provider.respond = None


def submit_quiz_run(
    client,
    draft,
    owner,
    capture,
    *,
    source=quiz.SPECIFIC,
    budget=60,
    budget_usd="5.00",
    worker=False,
) -> Run:
    """Fill every wizard step, run the check as the worker would, and submit: the run,
    queued (its task message captured, not sent). With `worker` (a test whose database
    commits, and a worker running), the check's and the run's messages go to the worker."""
    metric = metric_services.metric_create(owner=owner, name="capitals", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=source)
    artifact = {
        "artifact_kind": "prompt",
        "artifact_content": quiz.SEED,
        "program_source": "",
        "action": "next",
    }
    assert client.post(url(draft, "artifact"), artifact).status_code == 302
    assert upload(client, draft, quiz.jsonl(), name="capitals.jsonl").status_code == 302
    draft.refresh_from_db()
    roles = {"country": "input", "capital": "output"}
    data = dataset_data(
        draft.dataset.columns, roles, train_percent=50, validation_percent=50, test_percent=0
    )
    response = client.post(url(draft, "dataset"), data)
    assert response.status_code == 302, response.content.decode()
    response = client.post(
        url(draft, "metric"),
        {"metric_mode": "saved", "metric_version": version.pk, "action": "next"},
    )
    assert response.status_code == 302
    response = client.post(
        url(draft, "models"), models_data(budget=budget, budget_usd=budget_usd, engine="gepa")
    )
    assert response.status_code == 302, response.content.decode()
    if worker:
        from tests.conftest import wait_for

        assert client.post(f"/en/submit/{draft.pk}/check/run/").status_code == 302
        draft.refresh_from_db()
        wait_for(
            lambda: type(draft.contract_check).objects.get(pk=draft.contract_check_id).is_final
        )
        draft.contract_check.refresh_from_db()
        assert draft.contract_check.status == "passed", draft.contract_check.result
        response = client.post(f"/en/submit/{draft.pk}/submit/")
        assert response.status_code == 302, response.content.decode()
        return Run.objects.get(draft=draft)
    with capture(execute=False):
        assert client.post(f"/en/submit/{draft.pk}/check/run/").status_code == 302
    draft.refresh_from_db()
    check_execution.execute_check(draft.contract_check.pk)
    draft.contract_check.refresh_from_db()
    assert draft.contract_check.status == "passed", draft.contract_check.result
    with capture(execute=False) as sent:
        response = client.post(f"/en/submit/{draft.pk}/submit/")
    assert response.status_code == 302, response.content.decode()
    assert len(sent) == 1  # the run's task message, sent once the row is committed
    return Run.objects.get(draft=draft)


def make_quiz_run(
    owner,
    *,
    source: str = quiz.SPECIFIC,
    budget: int = 60,
    budget_usd: float = 5.0,
    seed_text: str = quiz.SEED,
    timeout_s: int = 20,
) -> Run:
    """A queued run of the quiz as the wizard would have submitted it (a passed check,
    the splits pinned: 6 train rows, 6 validation rows), made straight in the database
    for the tests that run it in real workers. Its task message is not sent."""
    from checks.models import Check
    from submissions.services import dataset_create

    dataset = dataset_create(owner=owner, filename="capitals.jsonl", data=quiz.jsonl())
    check = Check.objects.create(
        owner=owner, source=source, status="passed", timeout_s=timeout_s, result={}
    )
    config = {
        "format": 1,
        "name": "capitals",
        "artifact": {"kind": "prompt", "content": seed_text, "program": None},
        "dataset": {
            "filename": dataset.filename,
            "sha256": dataset.sha256,
            "format": dataset.format,
            "encoding": dataset.encoding,
            "rows": dataset.row_count,
            "columns": {"country": "input", "capital": "output"},
            "splits": {
                "mode": "ratio",
                "ratios": {"train": 0.5, "validation": 0.5, "test": 0.0},
                "seed": 7,
                "column": None,
                "counts": {"train": 6, "validation": 6, "test": 0},
                "rows": {"train": list(range(6)), "validation": list(range(6, 12)), "test": []},
            },
        },
        "metric": {"file": "metric.py", "sha256": "", "metric_id": None, "version": None},
        "models": {
            "task": "openai/test-gpt",
            "reflection": "openai/test-gpt",
            "metric": "openai/test-gpt",
            "metric_chosen": None,
        },
        "engine": {"chosen": "gepa", "resolved": "gepa"},
        "budget": {"metric_calls": budget, "usd": budget_usd},
        "check": {"id": check.pk, "status": "passed", "fingerprint": "", "sample_rows": [0, 1, 2]},
        "projection": None,
    }
    return Run.objects.create(
        owner=owner,
        name="capitals",
        config=config,
        metric_source=source,
        dataset=dataset,
        contract_check=check,
    )
