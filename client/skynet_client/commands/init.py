"""`skynet init`: write skynet.toml (so `skynet check` and `skynet evaluate` need no flags)
and, from a dataset's first rows, the cases.jsonl the check runs on; then print the CI job
that runs both."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from skynet_client import __version__, config, project
from skynet_client.commands.common import read_bytes
from skynet_client.commands.evaluate import add_columns
from skynet_client.exits import PASSED, USAGE, Stop
from skynet_client.words import _, ngettext

CASES = "cases.jsonl"
SAMPLE = 3
# Column names that usually hold a model's recorded outputs, and the reference answer:
# as the workbench guesses them when a dataset is uploaded.
RECORDED_NAMES = (
    "output",
    "outputs",
    "response",
    "prediction",
    "predicted",
    "completion",
    "generation",
    "model_output",
    "recorded_output",
)
EXPECTED_NAMES = ("expected", "label", "answer", "target", "gold", "reference")
IGNORED_NAMES = ("id", "split", "notes", "note", "timestamp", "created_at")

GITHUB_JOB = """\
name: metric
on: push

jobs:
  metric:
    runs-on: ubuntu-latest
    env:
      SKYNET_URL: ${{{{ secrets.SKYNET_URL }}}}
      SKYNET_TOKEN: ${{{{ secrets.SKYNET_TOKEN }}}}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: pip install "$SKYNET_URL/client/{wheel}"
      - run: skynet check --junit check.xml
      - run: skynet evaluate --junit evaluation.xml
"""


def add(commands, common) -> None:
    parser = commands.add_parser(
        "init",
        parents=[common],
        help="write skynet.toml and cases.jsonl, and print the CI job",
        description=f"Write {project.FILE} in this folder, so that `skynet check` and `skynet "
        f"evaluate` need no flags, and with --data the {CASES} the check runs on, made of "
        "the dataset's first rows; then print a GitHub Actions job that runs both. Nothing "
        "is sent to the workbench.",
    )
    parser.add_argument("--metric", default="metric.py", help="the metric.py (default metric.py)")
    parser.add_argument(
        "--data", metavar="FILE", help="a CSV or JSON Lines file of recorded outputs"
    )
    add_columns(parser)
    parser.add_argument("--min-mean", type=float, metavar="X", help="evaluate's --min-mean")
    parser.add_argument("--force", action="store_true", help="replace files that exist")
    parser.set_defaults(func=run)


def _rows(path: str) -> tuple[list[str], list[dict]]:
    data = read_bytes(path, _("The dataset"))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Stop(USAGE, _("The dataset {file} is not UTF-8 text.").format(file=path)) from None
    if path.lower().endswith((".jsonl", ".ndjson")):
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    row = json.loads(line)
                except ValueError:
                    said = _("Line {line} of {file} is not JSON.")
                    raise Stop(USAGE, said.format(line=number, file=path)) from None
                if not isinstance(row, dict):
                    said = _("Line {line} of {file} is not a JSON object.")
                    raise Stop(USAGE, said.format(line=number, file=path))
                rows.append(row)
        columns = list(dict.fromkeys(key for row in rows for key in row))
        return columns, rows
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


def roles_of(columns: list[str], given: dict[str, str], recorded: str | None) -> tuple[dict, str]:
    """Each column's role and the recorded column, guessed by name where not given."""
    by_name = {column.strip().casefold(): column for column in reversed(columns)}
    recorded = recorded or next((by_name[n] for n in RECORDED_NAMES if n in by_name), "")
    roles = {}
    for column in columns:
        name = column.strip().casefold()
        if column == recorded:
            continue
        if column in given:
            roles[column] = given[column]
        elif name in EXPECTED_NAMES:
            roles[column] = "output"
        elif name in IGNORED_NAMES or name.endswith("_id"):
            roles[column] = "ignore"
        else:
            roles[column] = "input"
    return roles, recorded


def case_of(row: dict, roles: dict, recorded: str) -> dict:
    expected = {c: row.get(c) for c, role in roles.items() if role == "output"}
    return {
        "input": {c: row.get(c) for c, role in roles.items() if role == "input"},
        "output": row.get(recorded),
        "expected": expected or None,
    }


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _write(path: Path, text: str, force: bool) -> None:
    if path.exists() and not force:
        raise Stop(USAGE, _("{file} exists already: pass --force to replace it.").format(file=path))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise Stop(
            USAGE, _("Cannot write {file}: {error}").format(file=path, error=error)
        ) from None


def run(args, output) -> int:
    url = args.url or config.saved().get("url")
    lines = ["# Settings for `skynet check` and `skynet evaluate` (flags win over them).", ""]
    if url:
        lines += ["[server]", f"url = {_toml(url)}", ""]
    lines += ["[metric]", f"path = {_toml(args.metric)}", ""]
    written = [project.FILE]
    cases = None
    if args.data:
        columns, rows = _rows(args.data)
        roles, recorded = roles_of(columns, dict(args.column), args.recorded)
        if not recorded:
            said = _("No column of {file} looks like recorded outputs: name it with --recorded.")
            raise Stop(USAGE, said.format(file=args.data))
        cases = [case_of(row, roles, recorded) for row in rows[:SAMPLE]]
        if len(cases) < SAMPLE:
            said = ngettext(
                "{file} has {count} row; the check needs {needed}.",
                "{file} has {count} rows; the check needs {needed}.",
                len(rows),
            )
            raise Stop(USAGE, said.format(file=args.data, count=len(rows), needed=SAMPLE))
        lines += ["[check]", f"cases = {_toml(CASES)}", ""]
        shown = {c: ("expected" if r == "output" else r) for c, r in roles.items()}
        lines += ["[evaluate]", f"data = {_toml(args.data)}", f"columns = {_toml(shown)}"]
        lines.append(f"recorded = {_toml(recorded)}")
        if args.min_mean is not None:
            lines.append(f"min_mean = {args.min_mean}")
        lines += ['max_invalid = "0"', ""]
        if "output" not in roles.values():
            output.note(
                _(
                    "No column is the expected value, so the metric gets expected=None: name it "
                    "with --column NAME=expected if one holds it."
                )
            )
    targets = [Path(project.FILE)] + ([Path(CASES)] if cases is not None else [])
    for path in targets:  # before anything is written: all or nothing
        if path.exists() and not args.force:
            said = _("{file} exists already: pass --force to replace it.")
            raise Stop(USAGE, said.format(file=path))
    _write(Path(project.FILE), "\n".join(lines), args.force)
    if cases is not None:
        _write(
            Path(CASES),
            "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases),
            args.force,
        )
        written.append(CASES)
    job = GITHUB_JOB.format(wheel=f"skynet_client-{__version__}-py3-none-any.whl")
    if cases is None:  # nothing to evaluate on yet
        job = job.replace("      - run: skynet evaluate --junit evaluation.xml\n", "")
    output.document({"written": written, "github_job": job})
    output.line(
        _("Wrote {files}. `skynet check` and `skynet evaluate` now need no flags.").format(
            files=", ".join(written)
        )
    )
    output.line(_("A GitHub Actions job (.github/workflows/metric.yml) that runs both:"))
    output.line("")
    output.line(job)
    return PASSED
