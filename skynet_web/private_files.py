"""Folders and files only the site's own user may read: var/ and the SQLite database.

var/ holds the secret key, the SQLite database, the embedded Redis socket and the demo
login, so every place that makes it goes through private_dir. No Django here: settings
use it before Django is set up.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# SQLite keeps a rollback journal, or a write-ahead log and its shared-memory index,
# beside the database file; they hold rows too.
SQLITE_SIBLINGS = ("-journal", "-wal", "-shm")


def private_dir(path: str | os.PathLike[str], *, tighten: bool = False) -> Path:
    """The folder `path`, made (with any missing parents) so only this user may enter it.

    A folder that already exists keeps its mode unless `tighten` is set. Set it only for
    a folder this site owns outright (var/, which older versions made 0755), never for a
    shared one such as /tmp, which merely holds a socket of ours.
    """
    path = Path(path)
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
    except FileExistsError:
        if not tighten or not path.is_dir():
            return path
    # mkdir's mode passes through the umask, and an existing folder kept its old mode.
    _set_mode(path, PRIVATE_DIR_MODE)
    return path


def private_sqlite_files(database: str | os.PathLike[str]) -> None:
    """Make a SQLite database file, and whichever of its siblings exist, 0600.

    SQLite creates its database file 0644 and gives a new journal or WAL file the mode of
    the database file, so tightening the database file on every connection keeps the
    siblings made later private too.
    """
    for suffix in ("", *SQLITE_SIBLINGS):
        try:
            _set_mode(Path(f"{database}{suffix}"), PRIVATE_FILE_MODE)
        except FileNotFoundError:  # a journal comes and goes with each transaction
            continue
        except PermissionError:  # another user's file, opened read-only: not ours to change
            continue


def _set_mode(path: Path, mode: int) -> None:
    if stat.S_IMODE(path.stat().st_mode) != mode:
        os.chmod(path, mode)
