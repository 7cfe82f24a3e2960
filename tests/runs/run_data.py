"""A submitted run of tests.quiz's capitals prompt, made through the wizard's own views,
for the run tests: the session provider answers as quiz's task and reflection models."""

from __future__ import annotations

import contextlib

from checks import execution as check_execution
from metrics import services as metric_services
from runs.models import Run
from tests import quiz
from tests.submissions.test_submit_wizard import dataset_data, models_data, upload, url


@contextlib.contextmanager
def quiz_models(provider):
    """The session provider answers as quiz's models while the block runs."""
    provider.respond = quiz.respond_any
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
    kind="prompt",
    engine="gepa",
) -> Run:
    """Fill every wizard step, run the check as the worker would, and submit: the run,
    queued (its task message captured, not sent). With `worker` (a test whose database
    commits, and a worker running), the check's and the run's messages go to the worker."""
    metric = metric_services.metric_create(owner=owner, name="capitals", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=source)
    artifact = {
        "artifact_kind": kind,
        "artifact_content": quiz.SEED if kind == "prompt" else "",
        "program_source": quiz.DSPY_PROGRAM if kind == "dspy" else "",
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
        url(draft, "models"), models_data(budget=budget, budget_usd=budget_usd, engine=engine)
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
    program: str | None = None,
) -> Run:
    """A queued run of the quiz as the wizard would have submitted it (a passed check,
    the splits pinned: 6 train rows, 6 validation rows), made straight in the database
    for the tests that run it in real workers. Its task message is not sent. With
    `program`, the run is of that DSPy program, with DSPy GEPA."""
    from checks.models import Check
    from submissions.services import dataset_create

    dataset = dataset_create(owner=owner, filename="capitals.jsonl", data=quiz.jsonl())
    check = Check.objects.create(
        owner=owner, source=source, status="passed", timeout_s=timeout_s, result={}
    )
    config = {
        "format": 1,
        "name": "capitals",
        "artifact": (
            {"kind": "dspy", "content": "", "program": program}
            if program is not None
            else {"kind": "prompt", "content": seed_text, "program": None}
        ),
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
        "engine": (
            {"chosen": "auto", "resolved": "dspy_gepa"}
            if program is not None
            else {"chosen": "gepa", "resolved": "gepa"}
        ),
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


def run_while_failing(provider, run: Run, reply, times: int) -> Run:
    """Run `run` here, as its task does, while the provider answers `reply` (a
    tests.providers.fakes.Reply) to the first `times` requests it matches."""
    from runs import execution

    provider.queue(*[reply] * times)
    try:
        execution.execute_run(run.pk)
    finally:
        provider.script.clear()
    run.refresh_from_db()
    return run


def finished_quiz_run(client, draft, owner, capture, provider, **options) -> Run:
    """A quiz run submitted and run to its end in this process, as the runs worker's task
    runs it (settings.RUNS_DIR must point somewhere of the test's own)."""
    from runs import execution

    with quiz_models(provider):
        run = submit_quiz_run(client, draft, owner, capture, **options)
        execution.execute_run(run.pk)
    run.refresh_from_db()
    return run


# The candidates of a running run written by hand: the seed, a child that does better on
# every case but the last, and a grandchild, not as good, with failed cases.
HAND_TEXTS = {
    0: quiz.SEED,
    # A word longer than a phone's screen: the page wraps it rather than widen.
    1: f"{quiz.SEED}\n{quiz.INSTRUCTION} Spell-it-as-in-{'-'.join(quiz.CAPITALS)}.",
    2: f"{quiz.SEED}\n{quiz.INSTRUCTION} Spell it as the country does.",
}


def hand_run(owner, *, status="running", attempt=1, metric_calls=24, **fields) -> Run:
    """A run as a worker in the middle of it leaves the rows: status, progress, three
    candidates and a few events, written by hand (no model, no sandbox)."""
    from datetime import timedelta

    from django.utils import timezone

    from runs.models import RunCandidate, RunEvent

    # The quiz run as submitted, then as a worker leaves it in the middle: scored on four
    # validation cases so far.
    run = make_quiz_run(owner)
    now = timezone.now()
    config = run.config
    config["name"] = "capitals by hand"
    config["dataset"]["splits"]["counts"] = {"train": 6, "validation": 4, "test": 0}
    progress = {
        "iteration": 3,
        "metric_calls": metric_calls,
        "max_metric_calls": 60,
        "cases_run": metric_calls,
        "candidates": 3,
        "best": {"idx": 1, "score": 0.75},
        "seed_score": 0.0,
        "points": [[0, 0.0], [12, 0.75]],
        "front": {"0": [1, 2], "1": [1, 2], "2": [1], "3": [0, 1, 2]},
        "spend": {
            "task_usd": 0.0123,
            "metric_usd": 0.0,
            "reflection_usd": 0.0456,
            "task_calls": 30,
            "metric_calls": 0,
            "reflection_calls": 3,
            "total_usd": 0.0579,
            "max_usd": 5.0,
        },
    }
    for name, value in {
        "name": "capitals by hand",
        "config": config,
        "status": status,
        "attempt": attempt,
        "progress": progress,
        "started_at": now - timedelta(minutes=4),
        "heartbeat_at": now,
        "enqueued_at": now - timedelta(minutes=5),
        **fields,
    }.items():
        setattr(run, name, value)
    run.save()
    scores = {
        0: {"0": 0.0, "1": 0.0, "2": 0.0, "3": 0.0},
        1: {"0": 1.0, "1": 1.0, "2": 1.0, "3": 0.0},
        2: {"0": 1.0, "1": 1.0, "2": 0.0, "3": 0.0},
    }
    for idx, parents, found, problems in (
        (0, [], 0, {}),
        (1, [0], 12, {}),
        (2, [1], 20, {"run_error": 3}),
    ):
        RunCandidate.objects.create(
            run=run,
            idx=idx,
            text=HAND_TEXTS[idx],
            parents=parents,
            val_scores=scores[idx],
            average=sum(scores[idx].values()) / 4,
            discovered_at=found,
            problems=problems,
        )
    for iteration, kind, data in (
        (0, "claimed", {"worker": "worker-a"}),
        (1, "iteration", {}),
        (1, "parent_selected", {"parent": 0, "score": 0.0}),
        (1, "proposed", {"text": HAND_TEXTS[1], "digest": "d1"}),
        (1, "accepted", {"candidate": 1, "score": 3.0, "parents": [0]}),
        (1, "valset", {"candidate": 1, "average": 0.75, "best": True}),
        (2, "rejected", {"old": 2.0, "new": 1.0, "reason": "not better"}),
        (3, "accepted", {"candidate": 2, "score": 3.0, "parents": [1]}),
        (3, "valset", {"candidate": 2, "average": 0.5, "best": False}),
        (3, "front", {"front": [1, 2]}),
    ):
        RunEvent.objects.create(run=run, attempt=attempt, iteration=iteration, kind=kind, data=data)
    return run
