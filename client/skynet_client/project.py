"""skynet.toml: a project's checked-in settings, so `skynet check` and `skynet evaluate`
need no flags in a CI job. It is read from --project FILE, else from ./skynet.toml when
there is one; a flag given on the command line wins over the file. File names in it are
relative to it. The token is never in it: SKYNET_TOKEN, or `skynet login`.

    [server]
    url = "https://workbench.example.com"

    [metric]
    path = "metric.py"
    name = "capitals"              # the metric's name on the workbench (else the path)

    [check]
    cases = "cases.jsonl"
    timeout = 60

    [evaluate]
    data = "outputs.jsonl"
    columns = { capital = "expected" }
    recorded = "output"
    min_mean = 0.8
    max_invalid = "0"              # a count, or a share such as "5%"
"""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from skynet_client.exits import USAGE, Stop
from skynet_client.keys import unknown_keys

FILE = "skynet.toml"
KEYS = {
    "": ("server", "metric", "check", "evaluate"),
    "server": ("url",),
    "metric": ("path", "name"),
    "check": ("cases", "timeout", "reflection_model", "metric_model"),
    "evaluate": (
        "data",
        "columns",
        "recorded",
        "min_mean",
        "max_invalid",
        "sample",
        "all",
        "split",
        "twice",
    ),
}


@dataclass
class Project:
    path: Path
    data: dict = field(default_factory=dict)

    def table(self, name: str) -> dict:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise Stop(USAGE, f"{self.path}: [{name}] must be a table.")
        return value

    def file(self, table: str, key: str) -> str | None:
        value = self.table(table).get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise Stop(USAGE, f"{self.path}: [{table}] {key} must be a file name.")
        return str(self.path.parent / value)

    def value(self, table: str, key: str, kind: type | tuple[type, ...], what: str):
        value = self.table(table).get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise Stop(USAGE, f"{self.path}: [{table}] {key} must be {what}.")
        return value


def add_option(parser) -> None:
    parser.add_argument(
        "--project",
        metavar="FILE",
        help=f"read settings from FILE (default: ./{FILE} when there is one); flags win",
    )


def load(args) -> Project | None:
    explicit = getattr(args, "project", None)
    path = Path(explicit or FILE)
    if not path.exists():
        if explicit:
            raise Stop(USAGE, f"The project file {explicit} is not found.")
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise Stop(USAGE, f"Cannot read the project file {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise Stop(USAGE, f"The project file {path} is not valid TOML: {error}") from None
    unknown_keys(data, KEYS, f"The project file {path}")
    return Project(path, data)


def _converted(project: Project, table: str, key: str, convert, raw):
    try:
        return convert(str(raw))
    except argparse.ArgumentTypeError as error:
        raise Stop(USAGE, f"{project.path}: [{table}] {key}: {error}") from None


def apply_common(args, project: Project | None) -> None:
    """The server's address and the metric's name and path, where no flag gave them."""
    if project is None:
        return
    args.project_url = project.value("server", "url", str, "an address")
    if getattr(args, "metric", None) is None:
        args.metric = project.file("metric", "path")
    if hasattr(args, "name") and args.name is None:
        args.name = project.value("metric", "name", str, "a name")


def apply_check(args, project: Project | None, seconds) -> None:
    apply_common(args, project)
    if project is not None:
        if args.cases is None:
            args.cases = project.file("check", "cases")
        if args.timeout is None:
            raw = project.value("check", "timeout", int, "whole seconds")
            args.timeout = (
                None if raw is None else _converted(project, "check", "timeout", seconds, raw)
            )
        for key in ("reflection_model", "metric_model"):
            if not getattr(args, key):
                setattr(args, key, project.value("check", key, str, "a model id") or "")
    if args.timeout is None:
        args.timeout = 60


def apply_evaluate(args, project: Project | None, *, column_role, max_invalid, splits) -> None:
    apply_common(args, project)
    if project is not None:
        if args.data is None:
            args.data = project.file("evaluate", "data")
        columns = project.value("evaluate", "columns", dict, "a table of column = role")
        if columns:
            from_file = [
                _converted(project, "evaluate", "columns", column_role, f"{name}={role}")
                for name, role in columns.items()
            ]
            given = {name for name, _ in args.column}
            args.column = [c for c in from_file if c[0] not in given] + args.column
        if args.recorded is None:
            args.recorded = project.value("evaluate", "recorded", str, "a column's name")
        if args.min_mean is None:
            args.min_mean = project.value("evaluate", "min_mean", (int, float), "a number")
        if args.max_invalid is None:
            raw = project.value("evaluate", "max_invalid", (int, str), '"N" or "P%"')
            if raw is not None:
                args.max_invalid = _converted(project, "evaluate", "max_invalid", max_invalid, raw)
        if args.sample is None and not args.all:
            args.sample = project.value("evaluate", "sample", int, "a whole number")
            args.all = bool(project.value("evaluate", "all", bool, "true or false"))
        if args.split is None:
            split = project.value("evaluate", "split", str, "a split")
            if split is not None and split not in splits:
                raise Stop(
                    USAGE, f"{project.path}: [evaluate] split must be one of {', '.join(splits)}."
                )
            args.split = split
        if not args.twice:
            args.twice = bool(project.value("evaluate", "twice", bool, "true or false"))
    if args.max_invalid is None:
        args.max_invalid = (0, False)


def require(args, *names: str) -> None:
    """Stop when a file the command needs came neither from the command line nor the file."""
    for name in names:
        if getattr(args, name, None) is None:
            raise Stop(
                USAGE,
                f"{name.upper()} is needed: give it on the command line, or in {FILE} "
                "(`skynet init` writes one).",
            )
