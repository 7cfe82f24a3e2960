"""A metric in several files through the API: `files` ({path: text}) on a check of a sent
source and on a saved version, read back with the version; past a limit, 422 with the
page's code and words."""

from __future__ import annotations

import pytest
from django.utils.translation import override

from checks.execution import execute_check
from checks.models import Check
from metrics import services as metric_services
from tests.api.conftest import Api, make_token
from wording import words

pytestmark = pytest.mark.django_db

METRIC = (
    "from src.evaluation import eval_score\n\n\n"
    "def score(input, output, expected=None):\n"
    "    value = eval_score(output, expected['label'])\n"
    "    return value, {'feedback': f'{output!r} against the label: {value}.'}\n"
)
FILES = {
    "src/evaluation.py": (
        "from .compare import same\n\n\ndef eval_score(a, b):\n"
        "    return 1.0 if same(a, b) else 0.0\n"
    ),
    "src/compare.py": "def same(a, b):\n    return a == b\n",
}
CASES = [
    {"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}},
    {"input": {"q": "b"}, "output": "y", "expected": {"label": "z"}},
    {"input": {"q": "c"}, "output": "w", "expected": {"label": "w"}},
]


def test_a_check_of_a_sent_source_imports_its_files(api):
    started = api.post("/checks", {"source": METRIC, "files": FILES, "cases": CASES})
    assert started.status_code == 202, started.json()
    check = Check.objects.get(pk=started.json()["id"])
    assert check.files == dict(sorted(FILES.items()))
    execute_check(check.pk)
    read = api.get(f"/checks/{check.pk}").json()
    assert read["passed"], read["result"]
    assert [case["score"] for case in read["result"]["cases"]] == [1.0, 0.0, 1.0]


def test_without_the_files_the_check_names_the_missing_module(api):
    body = api.post("/checks", {"source": METRIC, "cases": CASES}).json()
    execute_check(body["id"])
    read = api.get(f"/checks/{body['id']}").json()
    load = read["result"]["stages"][0]
    assert (load["problem"], load["status"]) == ("local_module_missing", "failed")
    assert load["message"] == "src.evaluation is not among this metric's files: add it."


def test_a_version_saved_with_files_carries_them_and_reads_them_back(api, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    saved = api.post(f"/metrics/{metric.pk}/versions", {"source": METRIC, "files": FILES})
    assert saved.status_code == 201
    assert saved.json()["files"] == dict(sorted(FILES.items()))
    read = api.get(f"/metrics/{metric.pk}/versions/2").json()
    assert read["files"] == dict(sorted(FILES.items()))
    assert api.get(f"/metrics/{metric.pk}/versions/1").json()["files"] == {}
    # The same source without `files` keeps the latest's: no new version.
    again = api.post(f"/metrics/{metric.pk}/versions", {"source": METRIC})
    assert again.status_code == 200 and again.json()["number"] == 2
    # {} is none: a new version without them.
    bare = api.post(f"/metrics/{metric.pk}/versions", {"source": METRIC, "files": {}})
    assert bare.status_code == 201 and bare.json()["files"] == {}
    # A check of the saved version runs with its files.
    started = api.post("/checks", {"metric_id": metric.pk, "version": 2}).json()
    assert Check.objects.get(pk=started["id"]).files == dict(sorted(FILES.items()))


@pytest.mark.parametrize(
    ("files", "code", "params"),
    [
        ({"../x.py": ""}, "file_path_parent", {"path": "../x.py"}),
        ({"/abs/x.py": ""}, "file_path_absolute", {"path": "/abs/x.py"}),
        ({"src/x.txt": ""}, "file_path_not_python", {"path": "src/x.txt"}),
        ({"metric.py": ""}, "file_path_is_metric", {"path": "metric.py"}),
        ({"src/x.py": "def f(:\n"}, "file_syntax_error", None),
        ({"x.py": "#" * 70000}, "file_too_large", {"path": "x.py", "size": 70000, "limit": 65536}),
        ({f"m{i}.py": "" for i in range(21)}, "too_many_files", {"count": 21, "max": 20}),
    ],
)
def test_files_past_a_limit_are_refused_with_the_pages_code_and_words(
    api, owner, files, code, params
):
    refused = api.post("/checks", {"source": METRIC, "files": files})
    assert refused.status_code == 422
    body = refused.json()
    assert (body["code"], body["field"]) == (code, "files")
    if params is not None:
        assert body["message"] == words(code, params, family="files")
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    refused = api.post(f"/metrics/{metric.pk}/versions", {"source": METRIC, "files": files})
    assert (refused.status_code, refused.json()["code"]) == (422, code)
    assert metric.versions.count() == 1
    assert Check.objects.count() == 0


def test_the_words_come_in_the_requests_language(owner):
    spanish = Api(make_token(owner), language="es")
    body = spanish.post("/checks", {"source": METRIC, "files": {"../x.py": ""}}).json()
    with override("es"):
        assert body["message"] == words("file_path_parent", {"path": "../x.py"}, family="files")


def test_files_go_with_a_source_only(api, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    refused = api.post("/checks", {"metric_id": metric.pk, "files": FILES})
    assert refused.status_code == 422
    assert refused.json()["code"] == "files_need_source"
    # A file's text must be text.
    refused = api.post("/checks", {"source": METRIC, "files": {"src/x.py": 3}})
    assert refused.status_code == 422
