"""`skynet align EVALUATION_ID`: "Improve the judge against the human labels" from a
terminal, as the evaluation page's Start does: the server makes the run's draft (the
judge's prompt as its artifact, the agreement with people as its metric, the labelled rows
split) and starts its contract check. What is left is the browser's: once the check
passed, the draft's review step submits the run; `skynet accept-prompt RUN_ID` then saves
its best prompt.

Exit codes: 0 the draft was made (even when the check could not start yet: it says why);
2 a usage error, or the server refused (too few labelled rows, a metric that is no judge,
a budget out of range), in the server's words."""

from __future__ import annotations

from skynet_client.commands.common import api
from skynet_client.exits import PASSED
from skynet_client.words import _


def add(commands, common) -> None:
    parser = commands.add_parser(
        "align",
        parents=[common],
        help="improve a judge's prompt against an evaluation's human labels",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n")[1],
    )
    parser.add_argument(
        "evaluation_id",
        metavar="EVALUATION_ID",
        type=int,
        help="one of your evaluations of a judge, done, with a person's label on its rows",
    )
    parser.add_argument(
        "--budget",
        type=int,
        metavar="N",
        help="the run's budget in metric calls (default: the server's, 150)",
    )
    parser.set_defaults(func=run)


def run(args, output) -> int:
    body = {} if args.budget is None else {"budget": args.budget}
    with api(args) as client:
        alignment = client.post(f"/evaluations/{args.evaluation_id}/align", body)
        draft = client.get(f"/runs/drafts/{alignment['draft_id']}")
        # The wizard's check step: the draft's own page is the wizard's, in the reader's
        # language, and its steps are paths under it.
        page = f"{client.server.url}{draft['url']}check/"
    output.document({"alignment": alignment, "draft": draft, "page": page})
    report(alignment, page, output)
    return PASSED


def report(alignment: dict, page: str, output) -> None:
    said = _("Improving the judge of evaluation {evaluation}: draft {draft}.")
    output.line(
        said.format(evaluation=alignment["evaluation_id"], draft=alignment["draft_id"]),
        style="bold",
    )
    said = _("It starts from version {version} of metric {metric}, whose prompt is {constant}.")
    output.line(
        "  "
        + said.format(
            version=alignment["seed_version"],
            metric=alignment["metric_id"],
            constant=alignment["constant"],
        )
    )
    splits = alignment["splits"]
    said = _("labelled rows: {train} train, {validation} validation, {test} test (dataset {id})")
    output.line("  " + said.format(id=alignment["dataset_id"], **splits))
    if alignment["check_refused"]:
        # The server's words: why the check could not start (the user's limits).
        output.line("  " + alignment["check_refused"], style="yellow")
        output.line("  " + _("Next: run the check, then submit from the review step:"))
    else:
        output.line("  " + _("Contract check {id} started.").format(id=alignment["check_id"]))
        output.line("  " + _("Next: once the check passes, submit from the review step:"))
    output.line(f"  {page}")
