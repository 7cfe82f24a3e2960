"""A metric in several files, through the real check and evaluation in real sandboxes:
metric.py imports a helper of its repository (`from src.evaluation import eval_score`),
which imports another relatively; without the files the check says which one is missing,
and a missing library is still said as one."""

from __future__ import annotations

import pytest

from contract.cases import Case
from contract.evaluation import evaluate
from contract.files import FilesRefused
from contract.runner import OnDemand

METRIC = """\
from src.evaluation import eval_score


def score(input, output, expected):
    value = eval_score(output, expected["label"])
    return value, {"feedback": f"{output!r} against {expected['label']!r}: {value}."}
"""

HELPERS = {
    "src/evaluation.py": (
        "from .compare import same\n\n\n"
        "def eval_score(answer, label):\n"
        "    return 1.0 if same(answer, label) else 0.0\n"
    ),
    "src/compare.py": (
        "def same(a, b):\n    return str(a).strip().lower() == str(b).strip().lower()\n"
    ),
}


def test_the_metric_passes_with_its_files(check):
    result = check(METRIC, files=HELPERS)
    assert result.passed, result.to_dict()
    assert [case.score for case in result.cases] == [1.0, 0.0, 1.0]


def test_a_package_with_an_init_and_a_relative_import_works_too(check):
    files = {
        **HELPERS,
        "src/__init__.py": "from .evaluation import eval_score as default_score\n",
    }
    source = METRIC.replace(
        "from src.evaluation import eval_score", "from src import default_score as eval_score"
    )
    result = check(source, files=files, one=True)
    assert result.passed, result.to_dict()


def test_without_its_files_the_missing_module_is_named(check):
    result = check(METRIC)
    load = result.stage("load")
    assert (result.failed_stage, load.problem) == ("load", "local_module_missing")
    assert (load.params["module"], load.params["line"]) == ("src.evaluation", 1)
    assert [c.status for c in result.cases][1:] == ["skipped", "skipped"]


def test_a_missing_helper_of_a_helper_is_named(check):
    only = {"src/evaluation.py": HELPERS["src/evaluation.py"]}
    result = check(METRIC, files=only, one=True)
    load = result.stage("load")
    assert (load.problem, load.params["module"]) == ("local_module_missing", "src.compare")


def test_a_library_the_sandbox_lacks_is_still_module_not_available(check):
    result = check("import torch\n" + METRIC, files=HELPERS, one=True)
    load = result.stage("load")
    assert (load.problem, load.params["module"]) == ("module_not_available", "torch")
    assert "numpy" in load.params["available"]


def test_each_case_imports_the_files_afresh_and_cannot_change_them(check):
    files = {
        "state.py": "COUNT = []\n",
        "helper.py": (
            "import state\n\n\n"
            "def bump():\n    state.COUNT.append(1)\n    return len(state.COUNT)\n"
        ),
    }
    # The case writes a helper.py of its own where it can (its sandbox's /tmp) and
    # imports the module again: it still gets the metric's, served from the job.
    source = """\
    import importlib
    import os

    import helper


    def score(input, output, expected=None):
        seen = helper.bump()
        for folder in (os.getcwd(), "/tmp"):
            try:
                with open(os.path.join(folder, "helper.py"), "w") as fh:
                    fh.write("raise SystemExit('replaced')\\n")
            except OSError:
                pass
        again = importlib.reload(helper)
        return float(seen), {"feedback": f"bumped to {seen} in {again.__file__}"}
    """
    result = check(source, files=files)
    assert [case.score for case in result.cases] == [1.0, 1.0, 1.0], result.to_dict()
    assert all(case.feedback == "bumped to 1 in helper.py" for case in result.cases)


def test_files_past_the_limits_are_refused_before_anything_runs(check):
    with pytest.raises(FilesRefused) as refused:
        check(METRIC, files={"../src/evaluation.py": ""})
    assert refused.value.code == "file_path_parent"


def test_an_evaluation_imports_the_files_of_both_scorings():
    cases = [
        Case(input={"q": str(i)}, output=o, expected={"label": "a"})
        for i, o in enumerate(["a", "b", " A "])
    ]
    second = {"src/evaluation.py": "def eval_score(answer, label):\n    return 0.5\n"}
    got = []
    ended = evaluate(
        METRIC,
        cases,
        on_scored=got.append,
        sandboxes=OnDemand(),
        timeout_s=10,
        files=HELPERS,
        second_source=METRIC,
        second_files=second,
    )
    assert ended.stopped is None
    got.sort(key=lambda scored: scored.index)
    assert [s.row.score for s in got] == [1.0, 0.0, 1.0]
    assert [s.second.score for s in got] == [0.5, 0.5, 0.5]


def test_an_evaluation_without_the_files_stops_naming_the_module():
    ended = evaluate(
        METRIC,
        [Case(input={}, output="a", expected={"label": "a"})],
        on_scored=lambda scored: None,
        sandboxes=OnDemand(),
        timeout_s=10,
    )
    assert ended.stopped == "load_failed"
    assert ended.params["problem"] == "local_module_missing"
    assert ended.params["params"]["module"] == "src.evaluation"
