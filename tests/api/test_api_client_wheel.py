"""The workbench serves its own `skynet` as a wheel: named in the API's index and on the
tokens page, fetched without a token, installed by pip as it is, and the same client as
client/. Installing from the source folder leaves nothing behind in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import skynet_client
from api import client_wheel

pytestmark = pytest.mark.django_db

CLIENT = Path(__file__).resolve().parents[2] / "client"


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def test_the_index_names_the_wheel_and_pip_installs_it(client, tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    index = client.get("/api/v1/").json()
    assert index["client"]["version"] == skynet_client.__version__
    wheel_url = index["client"]["wheel"]
    name = f"skynet_client-{skynet_client.__version__}-py3-none-any.whl"
    assert wheel_url == f"http://testserver/client/{name}"
    answer = client.get(f"/client/{name}")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/octet-stream"
    wheel = tmp_path / name
    wheel.write_bytes(b"".join(answer.streaming_content))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry = archive.read(
            f"skynet_client-{skynet_client.__version__}.dist-info/entry_points.txt"
        )
    # Every module of the client, and its command.
    assert {str(p.relative_to(CLIENT)) for p in (CLIENT / "skynet_client").rglob("*.py")} <= names
    # Its words in Spanish and Hindi.
    assert {f"skynet_client/locale/{lang}/LC_MESSAGES/skynet.mo" for lang in ("es", "hi")} <= names
    assert b"skynet=skynet_client.main:main" in entry.replace(b" ", b"")

    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert installed.returncode == 0, installed.stderr
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import skynet_client.main as m; print(m.__file__); m.main(['--version'])",
        ],
        env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.stdout.splitlines()[0].startswith(str(target))
    assert f"skynet {skynet_client.__version__}" in ran.stdout


def test_another_name_is_not_found_and_the_build_is_kept(client, tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    assert client.get("/client/skynet_client.whl").status_code == 404
    assert client.get("/client/skynet_client-0.1-py3-none-any.whl").status_code == 404
    first = client_wheel.current()
    built = first.path.stat().st_mtime_ns
    assert client_wheel.current().path == first.path
    assert first.path.stat().st_mtime_ns == built  # not built again


def test_installing_from_the_source_folder_leaves_nothing_behind(tmp_path):
    source = tmp_path / "client"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("__pycache__"))
    before = _files(source)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(tmp_path / "site"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "skynet_client" / "main.py").exists()
    assert _files(source) == before


def test_the_tokens_page_shows_the_line_that_installs_it(owner_client, tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    body = owner_client.get("/en/accounts/tokens/").content.decode()
    name = f"skynet_client-{skynet_client.__version__}-py3-none-any.whl"
    assert f'value="pip install http://testserver/client/{name}"' in body
    assert "The command line" in body
