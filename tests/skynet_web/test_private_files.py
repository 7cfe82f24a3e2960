"""var/ and the SQLite database are readable by the site's own user only."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from skynet_web.private_files import private_dir, private_sqlite_files
from tests.conftest import ROOT


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def manage(*args: str, database: Path) -> subprocess.CompletedProcess:
    """A management command run as on a fresh machine, on a SQLite database of its own
    (a secret key set, so the real var/secret_key is not involved)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DJANGO_"))},
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_SECRET_KEY": "private-files-test-" + "k" * 40,
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_migrate_makes_the_var_folder_0700_and_the_database_file_0600(tmp_path):
    var = tmp_path / "var"
    database = var / "db.sqlite3"
    manage("migrate", "--no-input", database=database)
    assert mode(var) == "0o700"
    assert mode(database) == "0o600"
    # A write-ahead log and its index, made after the connection opened, are private too.
    script = (
        "import os, stat\n"
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('PRAGMA journal_mode=WAL')\n"
        "    cursor.execute('CREATE TABLE probe (x)')\n"
        "    cursor.execute('INSERT INTO probe VALUES (1)')\n"
        "    for suffix in ('-wal', '-shm'):\n"
        f"        print(suffix, oct(stat.S_IMODE(os.stat({str(database)!r} + suffix).st_mode)))\n"
    )
    out = manage("shell", "-c", script, database=database).stdout
    assert "-wal 0o600" in out and "-shm 0o600" in out


def test_a_database_file_left_readable_by_an_older_version_is_tightened(tmp_path):
    database = tmp_path / "db.sqlite3"
    database.touch(mode=0o644)
    os.chmod(database, 0o644)
    manage("migrate", "--no-input", database=database)
    assert mode(database) == "0o600"


def test_the_sqlite_siblings_present_are_made_0600(tmp_path):
    database = tmp_path / "db.sqlite3"
    for path in (database, tmp_path / "db.sqlite3-wal", tmp_path / "db.sqlite3-journal"):
        path.write_bytes(b"")
        os.chmod(path, 0o644)
    private_sqlite_files(database)
    assert [mode(database), mode(tmp_path / "db.sqlite3-wal")] == ["0o600", "0o600"]
    assert mode(tmp_path / "db.sqlite3-journal") == "0o600"
    assert not (tmp_path / "db.sqlite3-shm").exists()


def test_private_dir_makes_missing_folders_0700_even_under_a_loose_umask(tmp_path):
    old = os.umask(0o000)
    try:
        made = private_dir(tmp_path / "a" / "var")
    finally:
        os.umask(old)
    assert mode(made) == "0o700"


def test_private_dir_tightens_var_but_leaves_a_shared_folder_alone(tmp_path):
    var = tmp_path / "var"
    shared = tmp_path / "shared"
    for folder in (var, shared):
        folder.mkdir()
        os.chmod(folder, 0o755)
    private_dir(var, tighten=True)
    private_dir(shared)
    assert mode(var) == "0o700"
    assert mode(shared) == "0o755"


def test_the_embedded_redis_folder_and_the_secret_key_folder_are_made_private(tmp_path):
    from skynet_web import embedded_redis
    from skynet_web.env import local_secret_key

    local_secret_key(tmp_path / "keys" / "secret_key")
    assert mode(tmp_path / "keys") == "0o700"
    socket_path = tmp_path / "run" / "redis.sock"
    process = embedded_redis.start(socket_path)
    embedded_redis.stop(process, socket_path)
    assert mode(tmp_path / "run") == "0o700"
