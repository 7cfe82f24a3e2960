"""`skynet run submit|watch|download`: optimization runs from a run file.

`skynet run submit RUN.toml` uploads the dataset, makes the run's draft, runs its
contract check in the server's worker and, once it passed, submits the run. File names
in the run file are relative to it. Every key but the tables' required ones may be left
out; the server checks the values as the submit wizard does and names the key it refuses.

    name = "capitals"                 # the run's name (default: the date and time)
    engine = "auto"                   # auto, gepa or dspy_gepa
    # minibatch = 3                   # train cases a candidate and its proposal are
                                      # compared on, 1 to 50 (or --minibatch N): bigger,
                                      # steadier comparisons; more metric calls each step

    [artifact]
    kind = "prompt"                   # prompt, python or dspy
    file = "prompt.txt"               # the prompt template, or program.py
    # text = "..."                    # python: the text run() gets (or text_file = "...")

    [dataset]
    file = "capitals.jsonl"           # a CSV or JSON Lines file to upload...
    # id = 12                         # ...or the id of one uploaded before
    roles = { country = "input", capital = "output" }   # input, output or ignore; a
                                      # column left out is ignored; no roles: guessed
    # types = { population = "number" }                 # number, text or json; else as read

    [splits]                          # by ratio (percent) and seed...
    train_percent = 50
    validation_percent = 50
    test_percent = 0
    seed = 7
    # column = "split"                # ...or a column naming each row's split

    [metric]
    file = "metric.py"                # a metric.py...
    # id = 3                          # ...or a saved metric (and version = 2; else its latest)

    [models]
    task = "openai/gpt-4.1-mini"      # the model the artifact calls
    reflection = "openai/gpt-4.1"     # the model that proposes new candidates
    # metric = ""                     # llm() in metric.py (default: the reflection model)

    [budget]
    metric_calls = 200                # the run stops when it has used them...
    usd = 2.0                         # ...or spent this much on its models

Exit codes: submit 0 once the run is submitted (with --watch: once it finished), 1 when
the check failed (its report is printed) or the watched run failed, was cancelled or
paused; watch 0 finished, 1 failed, cancelled or paused; download 0 saved; 2 a usage
error, a file that cannot be read, or a server that cannot be reached or refuses.
"""

from __future__ import annotations

import argparse
import io
import zipfile
from pathlib import Path

from skynet_client.commands import check as check_command
from skynet_client.commands import runfile
from skynet_client.commands.common import api, dataset_on_server
from skynet_client.exits import FAILED, PASSED, USAGE, Stop
from skynet_client.waiting import follow_run, wait_for_check
from skynet_client.words import _

WATCH_NOTE = "Ctrl+C stops watching only: the run goes on on the server."


def marks() -> dict[str, str]:
    """A stopped run's first word, by its status, in the reader's language."""
    return {
        "finished": _("FINISHED"),
        "failed": _("FAILED"),
        "cancelled": _("CANCELLED"),
        "paused": _("PAUSED"),
    }


def add(commands, common) -> None:
    parser = commands.add_parser(
        "run",
        help="submit an optimization run, watch it, download its bundle",
        description=__doc__.split("\n\n")[0],
        epilog="The run file's keys: `skynet run submit --help`.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    submit = actions.add_parser(
        "submit",
        parents=[common],
        help="check and submit the run a run file describes",
        description="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    submit.add_argument("file", metavar="RUN.toml", help="the run file")
    submit.add_argument(
        "--watch", action="store_true", help=f"then watch it until it stops. {WATCH_NOTE}"
    )
    submit.add_argument(
        "--minibatch",
        metavar="N",
        type=int,
        help="the minibatch size, 1 to 50, in place of the run file's: how many train cases "
        "a candidate and its proposal are compared on (bigger: steadier comparisons, more "
        "metric calls per iteration)",
    )
    submit.set_defaults(func=run_submit)
    watch = actions.add_parser(
        "watch",
        parents=[common],
        help="follow a run until it stops",
        description="Follow a run until it stops: a progress bar of its metric calls and "
        "its best score on a terminal. Exit 0 when it finished, 1 when it failed, was "
        f"cancelled or paused. {WATCH_NOTE}",
    )
    watch.add_argument("run_id", metavar="ID", type=int, help="the run's id")
    watch.set_defaults(func=run_watch)
    download = actions.add_parser(
        "download",
        parents=[common],
        help="save a run's bundle (a zip)",
        description="Save a run's bundle: metric.py, run.json, the dataset, the check's "
        "report and, once the run found something, result.json and its best candidate.",
    )
    download.add_argument("run_id", metavar="ID", type=int, help="the run's id")
    download.add_argument("-o", "--output", metavar="FILE", help="where (default run-ID.zip)")
    download.set_defaults(func=run_download)


# -- submit ----------------------------------------------------------------------------


def _dataset_id(client, found: runfile.RunFile, output) -> int:
    if found.dataset_id is not None:
        return found.dataset_id
    path = found.dataset_path
    return dataset_on_server(client, path.name, found.dataset_bytes(), output)["id"]


def run_submit(args, output) -> int:
    found = runfile.read(args.file)
    with api(args) as client:
        body = {**found.body, "dataset_id": _dataset_id(client, found, output)}
        if args.minibatch is not None:
            body["minibatch"] = args.minibatch
        draft = client.post("/runs/drafts", body)
        output.line(
            _("Draft {id}: {page}").format(id=draft["id"], page=client.server.url + draft["url"])
        )
        # The server's own words (in the reader's language): a noisy judge's warning.
        gate = draft.get("minibatch_gate") or {}
        if gate.get("message"):
            output.line("  " + gate["message"], style="yellow")
        check = client.post(f"/runs/drafts/{draft['id']}/check")
        check = wait_for_check(client, check, output, cancel=args.cancel_on_interrupt)
        if not check["passed"]:
            check_command.report(check, output)
            return FAILED
        output.line(
            _("Contract check {id} passed: {page}").format(id=check["id"], page=check["page"])
        )
        run = client.post(f"/runs/drafts/{draft['id']}/submit")
        run["page"] = f"{client.server.url}{run['url']}"
        output.line(
            _("Run {id} submitted: {page}").format(id=run["id"], page=run["page"]), style="bold"
        )
        if not args.watch:
            output.document(run)
            return PASSED
        output.line(_("Ctrl+C stops watching only: the run goes on on the server."))
        return _watched(client, run, output, args.cancel_on_interrupt)


# -- watch -----------------------------------------------------------------------------


def _watched(client, run: dict, output, cancel: bool) -> int:
    run = follow_run(client, run, output, cancel=cancel)
    report(run, output)
    return PASSED if run["status"] == "finished" else FAILED


def run_watch(args, output) -> int:
    with api(args) as client:
        run = client.get(f"/runs/{args.run_id}")
        return _watched(client, run, output, args.cancel_on_interrupt)


def report(run: dict, output) -> None:
    output.document(run)
    finished = run["status"] == "finished"
    mark = marks().get(run["status"], run["status"].upper())
    output.line(f"{mark}  {run['message']}", style="bold green" if finished else "bold red")
    if run["reason"]:
        output.line(f"  {run['reason']}")
    progress = run["progress"]
    output.line(f"  {progress['text']}")
    if progress["best_score"] is not None:
        seed = progress["seed_score"]
        said = _("best score {best} (candidate {candidate}; the starting one scored {seed})")
        output.line(
            "  "
            + said.format(
                best=f"{progress['best_score']:.4g}",
                candidate=progress["best_candidate"],
                seed="?" if seed is None else format(seed, ".4g"),
            )
        )
    output.line(f"  {run['page']}")


# -- download --------------------------------------------------------------------------


def run_download(args, output) -> int:
    target = Path(args.output or f"run-{args.run_id}.zip")
    with api(args) as client:
        data = client.request("GET", f"/runs/{args.run_id}/bundle").content
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
    except zipfile.BadZipFile:
        raise Stop(
            USAGE, _("The server's answer for run {id} is not a zip.").format(id=args.run_id)
        ) from None
    try:
        target.write_bytes(data)
    except OSError as error:
        raise Stop(
            USAGE, _("Cannot write {file}: {error}").format(file=target, error=error)
        ) from None
    has_result = "result.json" in names
    output.document({"run": args.run_id, "file": str(target), "bytes": len(data), "files": names})
    output.line(_("Saved {file} ({size} bytes).").format(file=target, size=len(data)))
    if not has_result:
        output.line("  " + _("No result.json yet: the run has not scored its starting candidate."))
    return PASSED
