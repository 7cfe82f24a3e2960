"""`--with PATH`: the helper modules beside metric.py that it imports, sent as
{path: text} so the server's sandbox can import them as the repository does.

A folder adds its .py files, every level down, by their paths from the folder's parent:
`--with src/` gives src/evaluation.py, src/__init__.py... (`__pycache__` and hidden
folders left out). A single .py file is added by its path from METRIC's folder (or as
given, when it lies elsewhere). The server holds the set to its limits and says, in its
own words, what is past one."""

from __future__ import annotations

from pathlib import Path

from skynet_client.commands.common import read_text
from skynet_client.exits import USAGE, Stop
from skynet_client.words import _


def _skipped(relative: Path) -> bool:
    return any(part == "__pycache__" or part.startswith(".") for part in relative.parts[:-1])


def collect(entries: list[str] | None, metric: str) -> dict[str, str]:
    """{path: text} of the --with entries, in path order; Stop(USAGE) for one that is
    neither a folder nor a file."""
    found: dict[str, str] = {}
    base = Path(metric).resolve().parent
    for entry in entries or []:
        given = Path(entry)
        if given.is_dir():
            folder = given.resolve()
            for path in sorted(folder.rglob("*.py")):
                relative = path.relative_to(folder.parent)
                if _skipped(path.relative_to(folder)) or not path.is_file():
                    continue
                found[relative.as_posix()] = read_text(str(path), _("The helper file"))
        elif given.is_file():
            try:
                name = given.resolve().relative_to(base).as_posix()
            except ValueError:
                name = given.as_posix()
            found[name] = read_text(str(given), _("The helper file"))
        else:
            raise Stop(
                USAGE, _("{what} not found: {path}").format(what=_("The helper file"), path=entry)
            )
    return dict(sorted(found.items()))
