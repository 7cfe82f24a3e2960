"""A metric in several files, in the playground: its helper modules are tabs beside
metric.py, saved with it as one version; a folder or a .zip adds them; the check runs
with them; the page shows them without JavaScript."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from checks.execution import execute_check
from checks.models import Check
from metrics import services as metric_services
from metrics.models import MetricVersion
from tests.metrics.test_playground import editor_data
from wording import words

pytestmark = pytest.mark.django_db

METRIC = """\
from src.evaluation import eval_score


def score(input, output, expected):
    value = eval_score(output, expected["label"])
    return value, {"feedback": f"{output!r} against {expected['label']!r}: {value}."}
"""
EVALUATION = (
    "from .compare import same\n\n\ndef eval_score(a, b):\n    return 1.0 if same(a, b) else 0.0\n"
)
COMPARE = "def same(a, b):\n    return str(a).strip().lower() == str(b).strip().lower()\n"


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(owner=owner, name="repo metric", starter="exact_match")


def with_files(data: dict, files: list[tuple[str, str]]) -> dict:
    """The editor's fields and its helper tabs, as the page posts them."""
    return {
        **data,
        "files_posted": "1",
        "file_path": [path for path, _text in files],
        "file_text": [text for _path, text in files],
    }


def save(client, metric, files, source=METRIC, **changes):
    data = with_files(editor_data(source, **changes), files)
    return client.post(f"/en/metrics/{metric.pk}/save/", data)


def test_saving_with_files_makes_a_version_carrying_them(owner_client, metric):
    files = [("src/evaluation.py", EVALUATION), ("src/compare.py", COMPARE)]
    response = save(owner_client, metric, files)
    assert response.status_code == 302
    version = metric.latest_version
    assert version.number == 2
    assert version.files == {"src/compare.py": COMPARE, "src/evaluation.py": EVALUATION}
    # The same text and the same files again: no new version.
    save(owner_client, metric, list(reversed(files)))
    assert metric.versions.count() == 2
    # A changed file alone makes one, as a changed metric.py does.
    save(owner_client, metric, [("src/evaluation.py", EVALUATION + "\n# v3\n"), files[1]])
    assert metric.latest_version.number == 3
    # Removing a file makes one too; the old versions keep theirs.
    save(owner_client, metric, files[:1])
    assert metric.latest_version.helper_files == {"src/evaluation.py": EVALUATION}
    assert MetricVersion.objects.get(metric=metric, number=2).helper_files == dict(sorted(files))


def test_a_save_that_posts_no_files_fields_keeps_the_latest_versions(owner_client, metric):
    save(owner_client, metric, [("src/evaluation.py", EVALUATION)])
    owner_client.post(f"/en/metrics/{metric.pk}/save/", editor_data(METRIC + "\n# edited\n"))
    assert metric.latest_version.number == 3
    assert metric.latest_version.helper_files == {"src/evaluation.py": EVALUATION}


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ([("../evaluation.py", "")], "../evaluation.py leaves metric.py&#x27;s folder"),
        ([("src/evaluation.py", "def f(:\n")], "Syntax error in src/evaluation.py at line 1"),
        ([("metric.py", "")], "metric.py is the metric itself"),
        ([(f"m{i}.py", "") for i in range(21)], "21 helper files: a metric may carry at most 20."),
        ([("a.py", "#" * 70000)], "a.py is 70000 bytes; a file may be at most 65536 bytes."),
        ([("a.py", ""), ("a.py", "")], "a.py is there twice."),
        ([("my-src/a.py", "")], "my-src is not a Python name"),
    ],
)
def test_files_past_a_limit_save_nothing_and_say_why(owner_client, metric, files, said):
    response = save(owner_client, metric, files)
    assert response.status_code == 400
    assert said in response.content.decode()
    assert metric.versions.count() == 1


def test_the_page_shows_every_file_without_javascript(owner_client, metric):
    save(owner_client, metric, [("src/evaluation.py", EVALUATION), ("src/compare.py", COMPARE)])
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert 'data-file-path="src/compare.py"' in body
    assert 'data-file-path="src/evaluation.py"' in body
    assert '<input type="hidden" name="file_path" value="src/evaluation.py">' in body
    assert "def same(a, b):" in body
    assert "{#" not in body and "{% comment" not in body  # no template comment leaks
    # The tab strip and the add-a-file panel need JavaScript: hidden without it.
    assert 'id="file-tabs" role="tablist"' in body
    assert 'id="file-panel-add" data-file-path="" hidden' in body
    # In path order.
    assert body.index('="src/compare.py"') < body.index('data-file-path="src/evaluation.py"')
    version = owner_client.get(f"/en/metrics/{metric.pk}/versions/2/").content.decode()
    assert '<h2 class="file-name">src/evaluation.py</h2>' in version
    assert 'id="src/evaluation.py-L1"' in version


def test_a_run_checks_the_version_with_its_files(owner_client, metric):
    files = [("src/evaluation.py", EVALUATION), ("src/compare.py", COMPARE)]
    data = editor_data(METRIC, action="run")
    for index in range(3):
        data[f"case{index}-expected"] = json.dumps({"label": data[f"case{index}-output"]})
    owner_client.post(f"/en/metrics/{metric.pk}/save/", with_files(data, files))
    check = Check.objects.get()
    assert check.files == dict(sorted(files))
    execute_check(check.pk)
    check.refresh_from_db()
    assert check.status == Check.Status.PASSED, check.result
    # The same metric.py without its files: the check names the missing module.
    save(owner_client, metric, [], action="run")
    bare = Check.objects.exclude(pk=check.pk).get()
    assert bare.files is None
    execute_check(bare.pk)
    bare.refresh_from_db()
    load = bare.result["stages"][0]
    assert (load["problem"], load["params"]["module"]) == ("local_module_missing", "src.evaluation")
    page = owner_client.get(f"/en/checks/{bare.pk}/").content.decode()
    assert "src.evaluation is not among this metric&#x27;s files: add it." in page


def test_restoring_a_version_restores_its_files(owner_client, metric):
    save(owner_client, metric, [("src/evaluation.py", EVALUATION)])
    save(owner_client, metric, [])
    assert metric.latest_version.helper_files == {}
    owner_client.post(f"/en/metrics/{metric.pk}/versions/2/restore/")
    assert metric.latest_version.number == 4
    assert metric.latest_version.helper_files == {"src/evaluation.py": EVALUATION}


def _zip(entries: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def upload_zip(client, metric, data: bytes, name: str = "repo.zip"):
    archive = io.BytesIO(data)
    archive.name = name
    return client.post(f"/en/metrics/{metric.pk}/files/upload/", {"archive": archive})


def test_a_zip_adds_its_py_files_and_says_what_it_left_out(owner_client, metric):
    data = _zip(
        {
            "my-repo-main/src/__init__.py": "",
            "my-repo-main/src/evaluation.py": EVALUATION,
            "my-repo-main/src/compare.py": COMPARE,
            "my-repo-main/src/__pycache__/compare.cpython-311.pyc": b"\x00\x01",
            "my-repo-main/README.md": "# repo\n",
            "my-repo-main/metric.py": METRIC,
        }
    )
    response = upload_zip(owner_client, metric, data)
    assert response.status_code == 200
    answer = response.json()
    # GitHub's top folder ("my-repo-main/") is no module name: dropped from every path.
    assert [f["path"] for f in answer["files"]] == [
        "src/__init__.py",
        "src/compare.py",
        "src/evaluation.py",
    ]
    assert answer["files"][2]["text"] == EVALUATION
    assert answer["errors"] == []
    assert answer["message"] == (
        "Added 3 files: src/__init__.py, src/compare.py, src/evaluation.py. "
        "Left out 1 file that is not a Python module: README.md. "
        "The upload's metric.py was left out: paste it into the metric.py tab if you want it."
    )
    # Nothing is saved until the editor saves: the upload only read the files.
    assert metric.versions.count() == 1
    paths = [(f["path"], f["text"]) for f in answer["files"]]
    assert save(owner_client, metric, paths).status_code == 302
    assert list(metric.latest_version.helper_files) == [p for p, _t in paths]


def test_a_zipped_folder_keeps_its_name_when_it_is_a_package(owner_client, metric):
    answer = upload_zip(owner_client, metric, _zip({"src/evaluation.py": EVALUATION})).json()
    assert [f["path"] for f in answer["files"]] == ["src/evaluation.py"]
    # Unless it is metric.py's own folder: then the paths start inside it.
    zipped = _zip({"myrepo/metric.py": METRIC, "myrepo/src/evaluation.py": EVALUATION})
    answer = upload_zip(owner_client, metric, zipped).json()
    assert [f["path"] for f in answer["files"]] == ["src/evaluation.py"]


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        (
            {f"src/m{i}.py": "" for i in range(21)},
            "21 helper files: a metric may carry at most 20.",
        ),
        ({"src/big.py": "#" * 70000}, "src/big.py is 70000 bytes; a file may be at most 65536"),
        ({"src/bad.py": "def f(:\n"}, "Syntax error in src/bad.py at line 1"),
        ({"src/latin.py": b"x = '\xe9'\n"}, "src/latin.py is not UTF-8 text."),
        ({"README.md": "# nothing\n"}, "The upload holds no .py file."),
    ],
)
def test_a_zip_past_a_limit_adds_nothing_and_says_why(owner_client, metric, entries, said):
    response = upload_zip(owner_client, metric, _zip(entries))
    assert response.status_code == 400
    answer = response.json()
    assert answer["files"] == []
    assert any(said in error for error in answer["errors"]), answer


def test_a_zip_bomb_member_is_refused_by_its_declared_size_unread(owner_client, metric):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("src/bomb.py", "#" * (50 << 20))  # 50 MB of text, a few KB zipped
    answer = upload_zip(owner_client, metric, buffer.getvalue()).json()
    assert answer["errors"] == [
        f"src/bomb.py is {50 << 20} bytes; a file may be at most 65536 bytes."
    ]


def test_what_is_not_a_zip_is_refused_in_the_readers_language(owner_client, metric):
    response = upload_zip(owner_client, metric, b"not a zip at all")
    assert response.status_code == 400
    assert response.json()["errors"] == ["The upload is not a .zip file."]


def test_a_folder_adds_its_files_by_their_paths_in_it(owner_client, metric):
    files = [io.BytesIO(EVALUATION.encode()), io.BytesIO(COMPARE.encode())]
    for item, name in zip(files, ("evaluation.py", "compare.py"), strict=True):
        item.name = name
    response = owner_client.post(
        f"/en/metrics/{metric.pk}/files/upload/",
        {
            "file": files,
            "path": ["src/evaluation.py", "src/compare.py"],
            "other_path": ["src/data.json"],
        },
    )
    assert response.status_code == 200, response.content
    answer = response.json()
    assert {f["path"]: f["text"] for f in answer["files"]} == {
        "src/compare.py": COMPARE,
        "src/evaluation.py": EVALUATION,
    }
    assert "Left out 1 file that is not a Python module: src/data.json." in answer["message"]


def test_an_upload_to_someone_elses_metric_is_not_found(client, outsider, metric):
    client.force_login(outsider)
    response = upload_zip(client, metric, _zip({"src/evaluation.py": EVALUATION}))
    assert response.status_code == 404


def test_diagnostics_say_a_missing_helper_and_drop_a_saved_one(owner_client, metric):
    url = f"/en/metrics/{metric.pk}/diagnostics/"
    found = owner_client.post(url, {"source": METRIC}).json()["diagnostics"]
    assert [(d["code"], d["line"]) for d in found] == [("local_module_missing", 1)]
    assert found[0]["message"] == "src.evaluation is not among this metric's files: add it."
    # A library is still one the sandbox does not have.
    found = owner_client.post(url, {"source": "import torch\n" + METRIC}).json()["diagnostics"]
    assert [d["code"] for d in found] == ["module_not_available", "local_module_missing"]
    # Once the version carries the file, its import is fine.
    save(owner_client, metric, [("src/evaluation.py", EVALUATION), ("src/compare.py", COMPARE)])
    assert owner_client.post(url, {"source": METRIC}).json()["diagnostics"] == []


def test_every_code_of_the_files_family_has_words():
    from contract import files as helper_files
    from wording.files import FILE_PROBLEMS

    assert set(helper_files.PROBLEMS) - set(FILE_PROBLEMS) == set()
    for code in FILE_PROBLEMS:
        said = words(code, {"path": "src/a.py", "count": 2}, family="files")
        assert "Unknown problem" not in said and "%(" not in said
