"""A metric's helper files: the limits they are held to (contract.files), the finder that
serves them in the child (skynet._helpers), and telling a missing local module from a
missing library (contract.local_modules). No sandbox here; see test_contract_helper_files."""

from __future__ import annotations

import sys

import pytest

from contract import files
from contract.local_modules import Imports, is_library, refine_stage
from skynet import _helpers

OK = "def eval_score(a, b):\n    return 1.0 if a == b else 0.0\n"


def codes(pairs, **kw) -> list[str]:
    return [problem.code for problem in files.validate(pairs, **kw)[1]]


# -- contract.files: every limit -----------------------------------------------------


def test_a_small_tree_of_modules_passes_in_path_order():
    kept, problems = files.validate(
        [("src/evaluation.py", OK), ("src/__init__.py", ""), ("helpers.py", "X = 1\r\n")]
    )
    assert problems == []
    assert list(kept) == ["helpers.py", "src/__init__.py", "src/evaluation.py"]
    assert kept["helpers.py"] == "X = 1\n"  # line ends as the editor keeps them


def test_at_most_20_files():
    twenty = [(f"m{i}.py", "") for i in range(files.MAX_FILES)]
    assert codes(twenty) == []
    problems = files.validate([*twenty, ("m20.py", "")])[1]
    assert problems[0] == files.Problem("too_many_files", {"count": 21, "max": 20})


def test_each_file_at_most_64_kb_of_utf8():
    exactly = "#" * (files.MAX_FILE_BYTES - 1) + "\n"
    assert codes([("a.py", exactly)]) == []
    # é is two bytes in UTF-8: 32768 of them are 64 KB of text in half as many characters.
    over = "#" + "é" * (files.MAX_FILE_BYTES // 2)
    problems = files.validate([("a.py", over)])[1]
    assert problems == [
        files.Problem(
            "file_too_large", {"path": "a.py", "size": files.MAX_FILE_BYTES + 1, "limit": 65536}
        )
    ]


def test_a_file_must_be_utf8_text():
    assert codes([("a.py", b"x = '\xe9'\n")]) == ["file_not_utf8"]
    assert codes([("a.py", 3)]) == ["file_not_text"]
    assert codes([("a.py", b"x = 1\n")]) == []


def test_each_file_must_be_valid_python():
    problems = files.validate([("src/evaluation.py", "def f(:\n    pass\n")])[1]
    assert [p.code for p in problems] == ["file_syntax_error"]
    assert problems[0].params["path"] == "src/evaluation.py"
    assert problems[0].params["line"] == 1
    assert codes([("a.py", "x = 1\x00\n")]) == ["file_syntax_error"]


def test_the_total_with_metric_py_is_at_most_512_kb():
    big = "#" * (files.MAX_FILE_BYTES - 1) + "\n"
    eight = [(f"m{i}.py", big) for i in range(8)]  # exactly 512 KB
    assert codes(eight) == []
    problems = files.validate(eight, metric_bytes=1)[1]
    assert problems == [
        files.Problem("files_too_large", {"size": files.MAX_TOTAL_BYTES + 1, "limit": 524288})
    ]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("", "file_path_empty"),
        ("   ", "file_path_empty"),
        (None, "file_path_empty"),
        ("/etc/evaluation.py", "file_path_absolute"),
        ("\\src\\evaluation.py", "file_path_absolute"),
        ("C:/src/evaluation.py", "file_path_absolute"),
        ("../evaluation.py", "file_path_parent"),
        ("src/../../evaluation.py", "file_path_parent"),
        ("src/evaluation.txt", "file_path_not_python"),
        ("src/evaluation", "file_path_not_python"),
        ("metric.py", "file_path_is_metric"),
        ("my-src/evaluation.py", "file_path_not_identifier"),
        ("src/2nd.py", "file_path_not_identifier"),
        ("src//evaluation.py", "file_path_not_identifier"),
        ("./src/evaluation.py", "file_path_not_identifier"),
        ("src\\evaluation.py", "file_path_not_identifier"),
        ("class/evaluation.py", "file_path_not_identifier"),
        ("src/" + "a" * 200 + ".py", "file_path_too_long"),
    ],
)
def test_paths_are_relative_slash_separated_identifiers_ending_in_py(path, code):
    assert codes([(path, "")]) == [code]


def test_a_path_part_that_is_not_a_name_is_named():
    problem = files.validate([("src/my-utils/a.py", "")])[1][0]
    assert problem.params == {"path": "src/my-utils/a.py", "part": "my-utils"}


def test_no_duplicates_nor_two_files_of_one_module():
    assert codes([("a.py", ""), ("a.py", "x = 1")]) == ["file_path_duplicate"]
    assert codes([("src.py", ""), ("src/__init__.py", "")]) == ["file_module_clash"]
    assert codes([("src.py", ""), ("src/evaluation.py", "")]) == ["file_module_clash"]


def test_clean_raises_with_the_first_problem_and_none_is_no_files():
    assert files.clean(None) == {} and files.clean({}) == {}
    with pytest.raises(files.FilesRefused) as refused:
        files.clean({"../x.py": "", "metric.py": ""})
    assert refused.value.code == "file_path_parent"
    assert [p.code for p in refused.value.problems] == ["file_path_parent", "file_path_is_metric"]
    assert isinstance(refused.value, ValueError)


def test_modules_and_top_names_of_the_files():
    paths = ["src/evaluation.py", "src/metrics/__init__.py", "util.py"]
    assert files.modules(paths) == {"src", "src.evaluation", "src.metrics", "util"}
    assert files.top_names(paths) == {"src", "util"}


@pytest.mark.parametrize(
    ("module", "level", "importer", "absolute"),
    [
        ("x", 0, "metric.py", "x"),
        ("evaluation", 1, "metric.py", "evaluation"),
        ("utils", 1, "src/evaluation.py", "src.utils"),
        ("", 1, "src/evaluation.py", "src"),
        ("other", 2, "src/a/b.py", "src.other"),
        ("x", 2, "metric.py", ""),
    ],
)
def test_a_relative_import_resolves_against_its_file(module, level, importer, absolute):
    assert files.resolve(module, level, importer) == absolute


# -- skynet._helpers: the child's finder ---------------------------------------------


@pytest.fixture
def helpers():
    before_path, before_modules = list(sys.meta_path), set(sys.modules)

    def install(tree: dict):
        return _helpers.install(tree)

    yield install
    sys.meta_path[:] = before_path
    for name in set(sys.modules) - before_modules:
        del sys.modules[name]


def test_the_finder_serves_packages_relative_imports_and_namespace_folders(helpers):
    helpers(
        {
            "zz_src/evaluation.py": "from .compare import same\n\n"
            "def eval_score(a, b):\n    return 1.0 if same(a, b) else 0.0\n",
            "zz_src/compare.py": "def same(a, b):\n    return a.lower() == b.lower()\n",
            "zz_pkg/__init__.py": "NAME = 'pkg'\n",
            "zz_pkg/deep/leaf.py": "from .. import NAME\nfrom ..side import SIDE\n",
            "zz_pkg/side.py": "SIDE = 2\n",
        }
    )
    from zz_src.evaluation import eval_score

    assert eval_score("A", "a") == 1.0
    import zz_pkg.deep.leaf as leaf
    import zz_src

    assert (leaf.NAME, leaf.SIDE, leaf.__file__) == ("pkg", 2, "zz_pkg/deep/leaf.py")
    # A folder without __init__.py: a package with no file, as a namespace package is.
    assert getattr(zz_src, "__file__", None) is None and zz_src.__path__
    with pytest.raises(ModuleNotFoundError) as missing:
        import zz_src.nothing
    assert missing.value.name == "zz_src.nothing"


def test_the_finder_comes_before_the_path_and_leaves_the_rest_alone(helpers):
    finder = helpers({"zz_only.py": "X = 1\n"})
    from importlib.machinery import PathFinder

    assert sys.meta_path.index(finder) == sys.meta_path.index(PathFinder) - 1
    assert finder.find_spec("json") is None
    assert helpers({}) is None and helpers(None) is None


# -- contract.local_modules: a missing helper, or a missing library -----------------


def test_libraries_are_the_stdlib_the_sandboxs_and_known_distributions():
    assert is_library("os.path") and is_library("numpy") and is_library("skynet")
    assert is_library("torch") and is_library("transformers")  # well known, not installed
    assert is_library("django")  # the worker's own environment
    assert not is_library("src.evaluation") and not is_library("my_helpers")


def _failed(problem, module, line, type_="ModuleNotFoundError", message=""):
    params = {"type": type_, "message": message, "traceback": [{"line": line}]}
    if module is not None:
        params["module"] = module
    return {"status": "failed", "problem": problem, "params": params, "problems": []}


def test_a_missing_local_module_is_named_as_the_import_writes_it():
    imports = Imports.of("import os\nfrom src.evaluation import eval_score\n")
    stage = refine_stage(_failed("module_not_available", "src", 2), imports)
    assert stage["problem"] == "local_module_missing"
    assert (stage["params"]["module"], stage["params"]["line"]) == ("src.evaluation", 2)
    assert "available" not in stage["params"]
    assert stage["problems"][0]["code"] == "local_module_missing"


def test_a_missing_module_of_a_helper_package_is_local_too():
    imports = Imports.of("from src.evaluation import f\n", ["src/evaluation.py"])
    stage = refine_stage(_failed("import_error", "src.compare", 1), imports)
    assert (stage["problem"], stage["params"]["module"]) == ("local_module_missing", "src.compare")


def test_a_relative_import_in_metric_py_is_local():
    imports = Imports.of("from .evaluation import f\n")
    failed = _failed("import_error", None, 1, "ImportError", "attempted relative import")
    stage = refine_stage(failed, imports)
    assert (stage["problem"], stage["params"]["module"]) == ("local_module_missing", ".evaluation")


def test_a_library_keeps_module_not_available():
    imports = Imports.of("import torch\n")
    failed = _failed("module_not_available", "torch", 1)
    assert refine_stage(failed, imports) is failed
    # A library the metric imports that misses a module of its own: not the metric's.
    imports = Imports.of("import transformers\n")
    failed = _failed("module_not_available", "zz_some_dependency", 1)
    assert refine_stage(failed, imports) is failed
    # Another import error is left as it was.
    imports = Imports.of("from src import nothing\n")
    failed = _failed("import_error", None, 1, "ImportError", "cannot import name")
    assert refine_stage(failed, imports) is failed
