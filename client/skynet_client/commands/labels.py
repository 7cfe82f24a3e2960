"""`skynet labels [LABELLING_ID]`: your labellings and those shared with you, how far you
got in each, and where to label them. Labelling itself is the browser's (one case at a
time, the metric's score hidden until the row is labelled): this prints the addresses.
`skynet labels ID --export` saves the labels given so far as a new version of the dataset
(the owner's), as the labelling page's button does, and prints its dataset id and name.

Exit codes: 0 listed, shown or saved; 2 a usage error, a labelling that is not yours nor
shared with you, an export by someone who does not own it, or a server that refused
(past your storage quota), in the server's words."""

from __future__ import annotations

from rich.cells import cell_len

from skynet_client.commands.common import api
from skynet_client.exits import PASSED, USAGE, Stop
from skynet_client.words import _, ngettext


def add(commands, common) -> None:
    parser = commands.add_parser(
        "labels",
        parents=[common],
        help="list your labellings, show one, or save its labels as a dataset version",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n")[1],
    )
    parser.add_argument(
        "labelling_id",
        metavar="LABELLING_ID",
        type=int,
        nargs="?",
        help="one labelling (else: list them all)",
    )
    parser.add_argument(
        "--export",
        action="store_true",
        help="save the labels as a new version of the dataset on the workbench (only its "
        "owner can): the same rows with a column of each labeller's labels and notes; "
        "prints its dataset id and name",
    )
    parser.set_defaults(func=run)


def page(client, path: str) -> str:
    """A page's address: labelling has pages but no API addresses, and the pages' paths
    start with the language the API is asked in (the reader's)."""
    language = client.http.headers.get("Accept-Language") or "en"
    return f"{client.server.url}/{language}{path}"


def run(args, output) -> int:
    if args.export and args.labelling_id is None:
        raise Stop(USAGE, _("--export needs a LABELLING_ID: `skynet labels` lists them."))
    with api(args) as client:
        if args.labelling_id is None:
            return listed(client, output)
        labelling = client.get(f"/labellings/{args.labelling_id}")
        labelling["page"] = page(client, f"/labellings/{labelling['id']}/")
        if not args.export:
            return shown(client, labelling, output)
        return exported(client, labelling, output)


def listed(client, output) -> int:
    labellings = client.get("/labellings")
    for labelling in labellings:
        labelling["page"] = page(client, f"/labellings/{labelling['id']}/")
    output.document(labellings)
    everything = page(client, "/labellings/")
    if not labellings:
        said = _(
            "You have no labellings, and none is shared with you. Start one from a "
            "dataset or an evaluation: {page}"
        )
        output.line(said.format(page=everything))
        return PASSED
    rows = [(_("ID"), _("DATASET"), _("LABELLED"), _("SHARED BY"))]
    for labelling in labellings:
        rows.append(
            (
                str(labelling["id"]),
                labelling["dataset_name"],
                f"{labelling['labelled']}/{labelling['cases']}",
                "" if labelling["mine"] else labelling["owner"],
            )
        )
    for number, line in enumerate(table(rows)):
        output.line(line, style="bold" if number == 0 else None)
    output.line(_("Label them in the browser: {page}").format(page=everything))
    return PASSED


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as aligned columns, the first (a number) to the right, padded by the cells a
    terminal gives each text (a Devanagari vowel sign takes none)."""
    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def padded(i: int, cell: str) -> str:
        gap = " " * (widths[i] - cell_len(cell))
        return gap + cell if i == 0 else cell + gap

    return ["  ".join(padded(i, cell) for i, cell in enumerate(row)).rstrip() for row in rows]


def shown(client, labelling: dict, output) -> int:
    output.document(labelling)
    if labelling["kind"] == "pass_fail":
        kind = _("pass or fail")
    else:
        kind = _("a scale from 1 to {scale}").format(scale=labelling["scale"])
    said = _("Labelling {id}: {dataset}, {kind}")
    output.line(
        said.format(id=labelling["id"], dataset=labelling["dataset_name"], kind=kind),
        style="bold",
    )
    said = ngettext(
        "{labelled} of {cases} case labelled by you",
        "{labelled} of {cases} cases labelled by you",
        labelling["cases"],
    )
    output.line("  " + said.format(labelled=labelling["labelled"], cases=labelling["cases"]))
    if not labelling["mine"]:
        output.line("  " + _("shared with you by {owner}").format(owner=labelling["owner"]))
    if labelling["labelled"] < labelling["cases"]:
        case = f"/labellings/{labelling['id']}/cases/{labelling['next_case']}/"
        output.line("  " + _("Label the next case in the browser:"))
        output.line(f"  {page(client, case)}")
        return PASSED
    output.line("  " + _("You have labelled every case:"))
    output.line(f"  {labelling['page']}")
    return PASSED


def exported(client, labelling: dict, output) -> int:
    if not labelling["mine"]:
        # The server answers an invitee's version with a 404: say why instead.
        said = _("Only {owner}, who owns labelling {id}, can save its labels as a dataset version.")
        raise Stop(USAGE, said.format(owner=labelling["owner"], id=labelling["id"]))
    version = client.post(f"/labellings/{labelling['id']}/versions")
    output.document({"labelling": labelling, "version": version})
    dataset = version["dataset"]
    if version["reused"]:
        said = _("These labels were saved before, as dataset {id}, {name}.")
    else:
        said = ngettext(
            "Saved the labels as dataset {id}, {name} ({rows} row).",
            "Saved the labels as dataset {id}, {name} ({rows} rows).",
            dataset["rows"],
        )
    output.line(said.format(id=dataset["id"], name=dataset["name"], rows=dataset["rows"]))
    return PASSED
