"""The libraries a metric may import (sandbox.libraries), through the real sandbox: each one
scores a check, from a zygote's sandbox and from one started alone; anything else fails at
Load naming the module and the set; the staged site is read-only, holds none of the worker's
packages, and nothing can write into it; without it, or without the memory for numpy, a
metric that imports one fails closed, saying why."""

from __future__ import annotations

import dataclasses
import json
import os
import stat

import pytest
from django.utils import translation

import sandbox
from contract.cases import Case
from contract.engine import run_check
from contract.evaluation import evaluate
from contract.runner import OnDemand
from contract.warm import WarmPool
from sandbox import site
from sandbox.config import SITE_MOUNT
from sandbox.libraries import AVAILABLE, DISTRIBUTIONS
from wording.contract import check_problem_words

from .conftest import bwrap_config, cannot_test, config_for, requires_bwrap

# One metric per library, each using it for something real; `expected` is what its
# feedback must say for every one of the three default cases.
USES = {
    "numpy": (
        "import numpy as np\n"
        "def score(input, output, expected=None):\n"
        "    value = float(np.linalg.norm(np.array([3.0, 4.0])))\n"
        "    return value / 5, {'feedback': f'{value:.1f}'}\n",
        "5.0",
    ),
    "scipy": (
        "from scipy import optimize, stats\n"
        "def score(input, output, expected=None):\n"
        "    r = stats.pearsonr([1, 2, 3, 4], [2, 4, 6, 8])[0]\n"
        "    x = optimize.minimize_scalar(lambda x: (x - 2) ** 2).x\n"
        "    return min(float(r), 1.0), {'feedback': f'{r:.2f} {x:.2f}'}\n",
        "1.00 2.00",
    ),
    "pandas": (
        "import pandas as pd\n"
        "def score(input, output, expected=None):\n"
        "    frame = pd.DataFrame({'a': [1, 2, 3]})\n"
        "    return 1.0, {'feedback': str(frame['a'].mean())}\n",
        "2.0",
    ),
    "sklearn": (
        "from sklearn.metrics import f1_score\n"
        "def score(input, output, expected=None):\n"
        "    f1 = f1_score([1, 0, 1, 1], [1, 0, 0, 1])\n"
        "    return float(f1), {'feedback': f'{f1:.2f}'}\n",
        "0.80",
    ),
    "sympy": (
        "import sympy\n"
        "from sympy.parsing.sympy_parser import parse_expr\n"
        "def score(input, output, expected=None):\n"
        "    same = sympy.simplify(parse_expr('(x + 1)**2') - parse_expr('x**2 + 2*x + 1'))\n"
        "    return float(same == 0), {'feedback': str(same)}\n",
        "0",
    ),
    "rapidfuzz": (
        "from rapidfuzz import fuzz, process\n"
        "def score(input, output, expected=None):\n"
        "    best = process.extractOne('appel', ['apple', 'pear'])[0]\n"
        "    return fuzz.ratio('kitten', 'kitten') / 100, {'feedback': best}\n",
        "apple",
    ),
    "nltk": (
        "from nltk.stem import PorterStemmer\n"
        "from nltk.tokenize import TreebankWordTokenizer, wordpunct_tokenize\n"
        "from nltk.translate.bleu_score import sentence_bleu\n"
        "def score(input, output, expected=None):\n"
        "    words = wordpunct_tokenize('The cats, running!')\n"
        "    stems = [PorterStemmer().stem(w) for w in words]\n"
        '    tree = TreebankWordTokenizer().tokenize("Don\'t stop.")\n'
        "    bleu = sentence_bleu([['a', 'cat', 'sat', 'here']], ['a', 'cat', 'sat', 'here'])\n"
        "    return float(bleu), {'feedback': ' '.join(stems + tree)}\n",
        "the cat , run ! Do n't stop .",
    ),
    "rouge_score": (
        "from rouge_score import rouge_scorer\n"
        "def score(input, output, expected=None):\n"
        "    scorer = rouge_scorer.RougeScorer(['rouge1', 'rougeL'], use_stemmer=True)\n"
        "    got = scorer.score('the cat sat', 'the cats sat')['rouge1'].fmeasure\n"
        "    return got, {'feedback': f'{got:.2f}'}\n",
        "1.00",
    ),
    "regex": (
        "import regex\n"
        "def score(input, output, expected=None):\n"
        "    words = regex.findall(r'\\p{L}+', 'héllo wörld')\n"
        "    return 1.0, {'feedback': ' '.join(words)}\n",
        "héllo wörld",
    ),
    "jsonschema": (
        "import jsonschema\n"
        "SCHEMA = {'type': 'object', 'required': ['label']}\n"
        "def score(input, output, expected=None):\n"
        "    try:\n"
        "        jsonschema.validate({'other': 1}, SCHEMA)\n"
        "    except jsonschema.ValidationError as exc:\n"
        "        return 0.0, {'feedback': exc.message}\n"
        "    return 1.0, {'feedback': 'valid'}\n",
        "'label' is a required property",
    ),
    "pydantic": (
        "from pydantic import BaseModel, ValidationError\n"
        "class Answer(BaseModel):\n"
        "    label: str\n"
        "    confidence: float\n"
        "def score(input, output, expected=None):\n"
        "    try:\n"
        "        Answer(label='x', confidence='high')\n"
        "    except ValidationError as exc:\n"
        "        return 0.0, {'feedback': exc.errors()[0]['loc'][0]}\n"
        "    return 1.0, {'feedback': 'valid'}\n",
        "confidence",
    ),
    "yaml": (
        "import yaml\n"
        "def score(input, output, expected=None):\n"
        "    data = yaml.safe_load('label: billing\\nscores: [1, 2]')\n"
        "    return 1.0, {'feedback': f\"{data['label']} {sum(data['scores'])}\"}\n",
        "billing 3",
    ),
    "deepdiff": (
        "from deepdiff import DeepDiff\n"
        "def score(input, output, expected=None):\n"
        "    diff = DeepDiff({'a': 1, 'b': 2}, {'a': 1, 'b': 3})\n"
        "    return 0.5, {'feedback': ' '.join(diff)}\n",
        "values_changed",
    ),
    "sqlparse": (
        "import sqlparse\n"
        "def score(input, output, expected=None):\n"
        "    text = sqlparse.format('select a from t', keyword_case='upper')\n"
        "    return 1.0, {'feedback': text}\n",
        "SELECT a FROM t",
    ),
    "dspy": (
        "import dspy\n"
        "def score(input, output, expected=None):\n"
        "    prediction = dspy.Prediction(label=output)\n"
        "    return 1.0, {'feedback': f'got {type(prediction).__name__}'}\n",
        "got Prediction",
    ),
}

TRIVIAL = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'ok'}\n"


def _load(result: dict) -> dict:
    return next(s for s in result["stages"] if s["id"] == "load")


@pytest.fixture(scope="module")
def zygote_pool():
    """A worker's pool as a root worker has it: check sandboxes forked by a zygote."""
    requires_bwrap()
    if not sandbox.zygote_possible(bwrap_config()):
        cannot_test("no cgroup here, so no zygote")
    pool = WarmPool(bwrap_config, size=2)
    pool.fill()
    assert pool.wait_ready(60), pool.failure
    assert pool.zygote is not None
    yield pool
    pool.close()


def _check(source: str, config=None, sandboxes=None) -> dict:
    return run_check(source, timeout_s=30, sandbox_config=config, sandboxes=sandboxes).to_dict()


def _passes(result: dict, feedback: str) -> None:
    assert result["failed_stage"] is None, json.dumps(_load(result))[:1500]
    assert [c["status"] for c in result["cases"]] == ["valid"] * 3, result["cases"]
    assert all(c["feedback"] == feedback for c in result["cases"]), result["cases"]


def test_the_documented_set_is_every_library_we_use():
    assert set(USES) == set(AVAILABLE)
    assert {"numpy", "scikit-learn", "rouge-score", "PyYAML", "dspy"} <= set(DISTRIBUTIONS)


@pytest.mark.parametrize("library", sorted(USES))
def test_each_library_scores_a_check_in_a_zygote_sandbox(zygote_pool, library):
    source, feedback = USES[library]
    _passes(_check(source, sandboxes=zygote_pool), feedback)


@pytest.mark.parametrize("library", ["numpy", "rapidfuzz", "pandas", "dspy"])
def test_they_score_in_a_sandbox_started_alone(library):
    requires_bwrap()
    source, feedback = USES[library]
    _passes(_check(source, config=bwrap_config()), feedback)


def test_they_score_unconfined():
    config = config_for("unconfined")
    source, feedback = USES["numpy"]
    _passes(_check(source, config=config), feedback)
    _passes(_check(USES["rapidfuzz"][0], config=config), USES["rapidfuzz"][1])


def test_a_module_outside_the_set_fails_at_load_naming_it_and_the_set(zygote_pool):
    # The workbench's own packages are no library a metric may know of: one of them is
    # said as a file of the metric's that is missing (contract.local_modules), and the
    # sandbox has none of them either.
    source = "import skynet_web\n" + TRIVIAL
    load = _load(_check(source, sandboxes=zygote_pool))
    assert (load["problem"], load["params"]["module"]) == ("local_module_missing", "skynet_web")
    for module in ("torch", "django", "celery", "litellm"):
        source = f"import {module}\n" + TRIVIAL
        result = _check(source, sandboxes=zygote_pool)
        load = _load(result)
        assert (result["failed_stage"], load["problem"]) == ("load", "module_not_available")
        assert load["params"]["module"] == module
        assert load["params"]["available"] == list(AVAILABLE)
        assert load["params"]["traceback"][0]["text"] == f"import {module}"
    with translation.override("en"):
        words = check_problem_words(load["problem"], load["params"])
    assert words.startswith("metric.py imports litellm, which the sandbox does not have.")
    assert "numpy, scipy, pandas, sklearn" in words and words.endswith("dspy.")


def test_a_missing_submodule_of_a_library_stays_the_imports_own_error(zygote_pool):
    result = _check("import numpy.no_such_module\n" + TRIVIAL, sandboxes=zygote_pool)
    load = _load(result)
    assert load["problem"] == "import_error"
    assert load["params"]["type"] == "ModuleNotFoundError"


def test_the_host_interpreters_own_packages_are_not_importable(zygote_pool):
    source = (
        "import sys\n"
        "def score(input, output, expected=None):\n"
        "    return 1.0, {'feedback': repr([p for p in sys.path if 'packages' in p])}\n"
    )
    result = _check(source, sandboxes=zygote_pool)
    # Only the stage: no site-packages or dist-packages of the sandbox's python3.
    assert result["cases"][0]["feedback"] == "[]", result["cases"][0]
    source = (
        "import sys\n"
        "def score(input, output, expected=None):\n"
        "    return 1.0, {'feedback': sys.path[-1]}\n"
    )
    assert _check(source, sandboxes=zygote_pool)["cases"][0]["feedback"] == SITE_MOUNT


def test_the_staged_site_holds_only_the_set_and_only_the_sandbox_may_read_it():
    config = bwrap_config()
    staged = config.site_packages
    assert staged is not None and staged == site.site_packages(sandbox.stage_gid(config))
    names = set(os.listdir(staged))
    assert {"numpy", "scipy", "pandas", "sklearn", "nltk", "rouge_score", "dspy"} <= names
    worker = {"django", "celery", "kombu", "skynet", "skynet_web", "litellm", "openai", "pip"}
    assert not names & worker
    assert not any(name.lower().startswith(("django", "celery", "litellm")) for name in names)
    root = os.path.dirname(staged)
    mode = stat.S_IMODE(os.stat(root).st_mode)
    assert mode in (0o700, 0o750) and not mode & stat.S_IRWXO
    assert os.stat(root).st_uid == os.geteuid()
    for folder, _dirs, files in os.walk(os.path.join(staged, "numpy")):
        for name in files[:3]:
            assert not stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) & 0o027
    manifest = json.loads(open(os.path.join(root, "manifest.json")).read())
    assert manifest["libraries"]["numpy"] and manifest["dspy"]


WRITES_INTO_SITE = """
import os, sys
def attempt(action):
    try:
        action()
        return "written"
    except OSError as exc:
        return type(exc).__name__
def score(input, output, expected=None):
    site = sys.path[-1]
    found = {
        "file": attempt(lambda: open(os.path.join(site, "numpy", "__init__.py"), "a").write("x")),
        "new": attempt(lambda: open(os.path.join(site, "planted.py"), "w").write("x")),
        "dir": attempt(lambda: os.mkdir(os.path.join(site, "planted"))),
        "remove": attempt(lambda: os.remove(os.path.join(site, "six.py"))),
        "chmod": attempt(lambda: os.chmod(os.path.join(site, "numpy"), 0o777)),
    }
    return 1.0, {"feedback": repr(sorted(found.items()))}
"""


@pytest.mark.parametrize("mode", ["zygote", "alone", "unconfined"])
def test_a_metric_cannot_write_into_the_site(zygote_pool, mode):
    if mode == "zygote":
        result = _check(WRITES_INTO_SITE, sandboxes=zygote_pool)
    else:
        config = bwrap_config() if mode == "alone" else config_for("unconfined")
        result = _check(WRITES_INTO_SITE, config=config)
    assert result["failed_stage"] is None, _load(result)
    feedback = result["cases"][0]["feedback"]
    assert "written" not in feedback, feedback
    # And the stage itself is as it was built.
    staged = os.path.join(bwrap_config().site_packages, "numpy", "__init__.py")
    assert not open(staged).read().endswith("x")


def test_without_the_stage_a_metric_importing_a_library_fails_closed_saying_so():
    requires_bwrap()
    config = dataclasses.replace(bwrap_config(), site_packages=None)
    result = _check(USES["numpy"][0], config=config)
    load = _load(result)
    assert (load["problem"], load["params"]["module"]) == ("library_unavailable", "numpy")
    with translation.override("en"):
        words = check_problem_words(load["problem"], load["params"])
    assert words.startswith("metric.py imports numpy, one of the libraries a metric may import")
    # A metric that imports none of them runs as ever.
    assert _check(TRIVIAL, config=config)["failed_stage"] is None


def test_numpy_where_a_process_has_too_little_memory_is_refused_with_the_reason():
    # Without a cgroup each process gets 1/8 of the check's memory: 64 MB of 512, less
    # than numpy maps; OpenBLAS would end the process, the guard says why instead.
    config = config_for("bwrap-rlimits")
    for library in ("numpy", "pandas"):
        result = _check(USES[library][0], config=config)
        load = _load(result)
        assert load["problem"] == "library_needs_memory", load
        assert (load["params"]["module"], load["params"]["memory_mb"]) == ("numpy", 64)
    with translation.override("en"):
        words = check_problem_words(load["problem"], load["params"])
    assert "SKYNET_SANDBOX_MEMORY_MB" in words and "64 MB" in words
    # What needs no numpy still works there, and numpy does with the memory for it.
    _passes(_check(USES["rapidfuzz"][0], config=config), USES["rapidfuzz"][1])
    roomy = dataclasses.replace(config, memory_mb=2048)
    _passes(_check(USES["numpy"][0], config=roomy), USES["numpy"][1])


def test_numerical_threads_work_under_the_syscall_filter(zygote_pool):
    source = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "import numpy as np\n"
        "from threadpoolctl import threadpool_info, threadpool_limits\n"
        "def score(input, output, expected=None):\n"
        "    threads = [i['num_threads'] for i in threadpool_info()]\n"
        "    with threadpool_limits(2), ThreadPoolExecutor(2) as pool:\n"
        "        a = np.ones((300, 300))\n"
        "        sums = list(pool.map(lambda k: float((a @ a).sum()) + k, range(4)))\n"
        "    return 1.0, {'feedback': f'{threads} {sums[0]:.0f}'}\n"
    )
    result = _check(source, sandboxes=zygote_pool)
    # No pool of threads at start (OPENBLAS_NUM_THREADS=1), and threads when asked for.
    _passes(result, "[1] 27000000")


def test_nltk_needs_no_data_for_its_tokenizers_and_says_what_needs_some(zygote_pool):
    source = (
        "import nltk\n"
        "def score(input, output, expected=None):\n"
        "    try:\n"
        "        nltk.word_tokenize('Hello there.')\n"
        "    except LookupError:\n"
        "        return 1.0, {'feedback': 'word_tokenize needs punkt_tab'}\n"
        "    return 0.0, {'feedback': 'found data'}\n"
    )
    _passes(_check(source, sandboxes=zygote_pool), "word_tokenize needs punkt_tab")


def test_evaluations_and_runs_get_the_same_site():
    requires_bwrap()
    from jobs import sandbox_pool

    config = sandbox_pool.config()
    assert config.site_packages == site.site_packages(sandbox.stage_gid(config))
    assert sandbox_pool.dspy_config().site_packages == config.site_packages
    got = []
    evaluate(
        USES["numpy"][0],
        [Case(input={"q": 1}, output="x", expected=None)] * 2,
        on_scored=got.append,
        sandboxes=OnDemand(config),
        timeout_s=30,
    )
    assert [scored.row.status for scored in got] == ["valid", "valid"]
