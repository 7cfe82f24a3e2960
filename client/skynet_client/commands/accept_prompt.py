"""`skynet accept-prompt RUN_ID`: accept the best prompt of a run that `skynet align`
prepared, as the run page's Accept does: the server saves it as a new version of the
judge (only the prompt's constant changed) and starts an evaluation comparing that version
with the one it started from on the held-out rows. With --wait, follows that evaluation
and prints how each version agrees with people.

Exit codes: 0 accepted (with --wait: the comparison finished); 1 with --wait, the
comparison failed or was cancelled; 2 a usage error, or the server refused (the run has
not finished, its prompt was accepted already, it found nothing better), in the server's
words."""

from __future__ import annotations

from skynet_client.commands.common import api
from skynet_client.commands.evaluate import people_lines
from skynet_client.exits import FAILED, PASSED
from skynet_client.waiting import wait_for_evaluation
from skynet_client.words import _


def add(commands, common) -> None:
    parser = commands.add_parser(
        "accept-prompt",
        parents=[common],
        help="save an alignment run's best prompt as a new version of the judge",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n")[1],
    )
    parser.add_argument(
        "run_id", metavar="RUN_ID", type=int, help="the finished run `skynet align` prepared"
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="then wait for the comparison evaluation to end and print the agreement with "
        "people of both versions",
    )
    parser.set_defaults(func=run)


def run(args, output) -> int:
    with api(args) as client:
        answer = client.post(f"/runs/{args.run_id}/accept-prompt")
        alignment, evaluation = answer["alignment"], answer["evaluation"]
        evaluation["page"] = f"{client.server.url}{evaluation['url']}"
        accepted(alignment, evaluation, output)
        if args.wait:
            evaluation = wait_for_evaluation(
                client, evaluation, output, cancel=args.cancel_on_interrupt
            )
    output.document({"alignment": alignment, "evaluation": evaluation})
    if not args.wait:
        return PASSED
    return compared(alignment, evaluation, output)


def accepted(alignment: dict, evaluation: dict, output) -> None:
    said = _("Saved the run's best prompt as version {version} of metric {metric}.")
    output.line(
        said.format(version=alignment["accepted_version"], metric=alignment["metric_id"]),
        style="bold",
    )
    said = _(
        "Evaluation {id} compares it with version {seed}, the one it started from, on the "
        "held-out rows:"
    )
    output.line("  " + said.format(id=evaluation["id"], seed=alignment["seed_version"]))
    output.line(f"  {evaluation['page']}")


def compared(alignment: dict, evaluation: dict, output) -> int:
    """The comparison's end: its verdict, then each version's agreement with people (the
    first scoring is the version it started from, the second the accepted one)."""
    said = (evaluation.get("verdict") or {}).get("text") or evaluation.get("failure_message")
    if evaluation["status"] != "done":
        output.failure(
            _("Evaluation {id}: {status}").format(
                id=evaluation["id"], status=evaluation["status_label"]
            )
            + (f" · {said}" if said else "")
        )
        return FAILED
    output.line(_("Evaluation {id}: {status}").format(id=evaluation["id"], status=said))
    human = (evaluation.get("summary") or {}).get("human")
    if not human:
        return PASSED
    versions = (
        (_("version {number}, the one it started from"), alignment["seed_version"], "first"),
        (_("version {number}, the accepted prompt"), alignment["accepted_version"], "second"),
    )
    for title, number, which in versions:
        lines = people_lines({**human, "first": human.get(which)})
        if not lines:
            continue
        output.line("  " + title.format(number=number))
        for line in lines:
            output.line("    " + line)
    return PASSED
