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
from skynet_client.words import _

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
            raise Stop(
                USAGE, _("{file}: [{table}] must be a table.").format(file=self.path, table=name)
            )
        return value

    def file(self, table: str, key: str) -> str | None:
        value = self.table(table).get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            said = _("{file}: [{table}] {key} must be a file name.")
            raise Stop(USAGE, said.format(file=self.path, table=table, key=key))
        return str(self.path.parent / value)

    def value(self, table: str, key: str, kind: type | tuple[type, ...], what: str):
        value = self.table(table).get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            said = _("{file}: [{table}] {key} must be {what}.")
            raise Stop(USAGE, said.format(file=self.path, table=table, key=key, what=what))
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
            raise Stop(USAGE, _("The project file {file} is not found.").format(file=explicit))
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        said = _("Cannot read the project file {file}: {error}")
        raise Stop(USAGE, said.format(file=path, error=error)) from None
    except tomllib.TOMLDecodeError as error:
        said = _("The project file {file} is not valid TOML: {error}")
        raise Stop(USAGE, said.format(file=path, error=error)) from None
    unknown_keys(data, KEYS, _("The project file {file}").format(file=path))
    return Project(path, data)


def _converted(project: Project, table: str, key: str, convert, raw):
    try:
        return convert(str(raw))
    except argparse.ArgumentTypeError as error:
        said = f"{project.path}: [{table}] {key}: {error}"  # the error is worded already
        raise Stop(USAGE, said) from None


def apply_common(args, project: Project | None) -> None:
    """The server's address and the metric's name and path, where no flag gave them."""
    if project is None:
        return
    args.project_url = project.value("server", "url", str, _("an address"))
    if getattr(args, "metric", None) is None:
        args.metric = project.file("metric", "path")
    if hasattr(args, "name") and args.name is None:
        args.name = project.value("metric", "name", str, _("a name"))


def apply_check(args, project: Project | None, seconds) -> None:
    apply_common(args, project)
    if project is not None:
        if args.cases is None:
            args.cases = project.file("check", "cases")
        if args.timeout is None:
            raw = project.value("check", "timeout", int, _("whole seconds"))
            args.timeout = (
                None if raw is None else _converted(project, "check", "timeout", seconds, raw)
            )
        for key in ("reflection_model", "metric_model"):
            if not getattr(args, key):
                setattr(args, key, project.value("check", key, str, _("a model id")) or "")
    if args.timeout is None:
        args.timeout = 60


def apply_evaluate(args, project: Project | None, *, column_role, max_invalid, splits) -> None:
    apply_common(args, project)
    if project is not None:
        if args.data is None:
            args.data = project.file("evaluate", "data")
        columns = project.value("evaluate", "columns", dict, _("a table of column = role"))
        if columns:
            from_file = [
                _converted(project, "evaluate", "columns", column_role, f"{name}={role}")
                for name, role in columns.items()
            ]
            given = {name for name, _ in args.column}
            args.column = [c for c in from_file if c[0] not in given] + args.column
        if args.recorded is None:
            args.recorded = project.value("evaluate", "recorded", str, _("a column's name"))
        if args.min_mean is None:
            args.min_mean = project.value("evaluate", "min_mean", (int, float), _("a number"))
        if args.max_invalid is None:
            raw = project.value("evaluate", "max_invalid", (int, str), _('"N" or "P%"'))
            if raw is not None:
                args.max_invalid = _converted(project, "evaluate", "max_invalid", max_invalid, raw)
        if args.sample is None and not args.all:
            args.sample = project.value("evaluate", "sample", int, _("a whole number"))
            args.all = bool(project.value("evaluate", "all", bool, _("true or false")))
        if args.split is None:
            split = project.value("evaluate", "split", str, _("a split"))
            if split is not None and split not in splits:
                said = _("{file}: [evaluate] split must be one of {splits}.")
                raise Stop(USAGE, said.format(file=project.path, splits=", ".join(splits)))
            args.split = split
        if not args.twice:
            args.twice = bool(project.value("evaluate", "twice", bool, _("true or false")))
    if args.max_invalid is None:
        args.max_invalid = (0, False)


def require(args, *names: str) -> None:
    """Stop when a file the command needs came neither from the command line nor the file."""
    for name in names:
        if getattr(args, name, None) is None:
            said = _(
                "{name} is needed: give it on the command line, or in {file} (`skynet init` "
                "writes one)."
            )
            raise Stop(USAGE, said.format(name=name.upper(), file=FILE))
