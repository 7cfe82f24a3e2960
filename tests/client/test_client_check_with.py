"""`skynet check metric.py --with src/` against the real server, worker and Redis: the
helper modules a metric imports go with it, as they lie in the repository."""

from __future__ import annotations

import pytest

from checks.models import Check

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

METRIC = """\
from src.evaluation import eval_score


def score(input, output, expected=None):
    value = eval_score(output, expected["label"])
    return value, {"feedback": f"{output!r} against {expected['label']!r}: {value}."}
"""
EVALUATION = (
    "from .compare import same\n\n\n"
    "def eval_score(answer, label):\n    return 1.0 if same(answer, label) else 0.0\n"
)
COMPARE = "def same(a, b):\n    return a == b\n"
CASES = "\n".join(
    [
        '{"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}}',
        '{"input": {"q": "b"}, "output": "y", "expected": {"label": "z"}}',
        '{"input": {"q": "c"}, "output": "w", "expected": {"label": "w"}}',
    ]
)


@pytest.fixture
def repository(tmp_path):
    (tmp_path / "metric.py").write_text(METRIC)
    (tmp_path / "cases.jsonl").write_text(CASES + "\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "evaluation.py").write_text(EVALUATION)
    (src / "compare.py").write_text(COMPARE)
    (src / "notes.txt").write_text("not a module\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "stale.py").write_text("raise SystemExit\n")
    return tmp_path


def test_with_a_folder_sends_its_modules_and_the_check_passes(
    cli, celery_worker_process, repository
):
    code, check = cli.json("check", "metric.py", "--cases", "cases.jsonl", "--with", "src/")
    assert code == 0, check
    assert [case["score"] for case in check["result"]["cases"]] == [1.0, 0.0, 1.0]
    stored = Check.objects.get(pk=check["id"])
    assert stored.files == {"src/compare.py": COMPARE, "src/evaluation.py": EVALUATION}


def test_with_single_files_by_their_paths_from_the_metrics_folder(
    cli, celery_worker_process, repository
):
    done = cli(
        "check",
        "metric.py",
        "--cases",
        "cases.jsonl",
        "--with",
        "src/evaluation.py",
        "--with",
        str(repository / "src" / "compare.py"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stored = Check.objects.latest("created_at")
    assert sorted(stored.files) == ["src/compare.py", "src/evaluation.py"]


def test_without_the_files_the_check_fails_naming_the_module(
    cli, celery_worker_process, repository
):
    done = cli("check", "metric.py", "--cases", "cases.jsonl")
    assert done.returncode == 1
    assert "src.evaluation is not among this metric's files: add it." in done.stdout
    # A helper that imports one it was not sent with: that one is named.
    done = cli("check", "metric.py", "--cases", "cases.jsonl", "--with", "src/evaluation.py")
    assert done.returncode == 1
    assert "src.compare is not among this metric's files: add it." in done.stdout


def test_files_past_a_limit_stop_with_the_servers_words(cli, repository):
    (repository / "src" / "broken.py").write_text("def f(:\n")
    done = cli("check", "metric.py", "--with", "src")
    assert done.returncode == 2
    assert "Syntax error in src/broken.py at line 1" in done.stderr
    assert Check.objects.count() == 0
    missing = cli("check", "metric.py", "--with", "lib/")
    assert missing.returncode == 2 and "lib/" in missing.stderr
