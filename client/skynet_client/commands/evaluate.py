"""`skynet evaluate metric.py data.csv`: score a dataset's recorded outputs with a metric
in the server's worker, as the playground's Evaluate page does, and say whether the mean
score is good enough."""

from __future__ import annotations

import argparse
from pathlib import Path

from skynet_client import baseline, project
from skynet_client.commands.common import add_reports, api, dataset_on_server, read_bytes, read_text
from skynet_client.exits import FAILED, PASSED, USAGE, Stop
from skynet_client.reports import junit, of_evaluation, summary
from skynet_client.waiting import wait_for_evaluation
from skynet_client.words import _, case_status, ngettext, number

# A column's role as the command line says it, and as the API names it: the expected
# value is the role the wizard calls Output.
ROLES = {
    "input": "input",
    "expected": "output",
    "output": "output",
    "ignore": "ignore",
    # A person's judgement of the row: "human" is a score or a label as its values say.
    "human": "human",
    "human_score": "human_score",
    "human_label": "human_label",
    "note": "human_note",
    "human_note": "human_note",
}
SPLITS = ("all", "train", "validation", "test")
DOWNLOADS = (".csv", ".jsonl")


def column_role(text: str) -> tuple[str, str]:
    name, equals, role = text.rpartition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(
            _("expected NAME=ROLE, got {value}").format(value=repr(text))
        )
    if role not in ROLES:
        raise argparse.ArgumentTypeError(
            _(
                "ROLE must be one of input, expected, ignore, human, human_score, "
                "human_label, note, got {value}"
            ).format(value=repr(role))
        )
    return name, ROLES[role]


def number_pair(text: str) -> list[float]:
    low, comma, high = text.partition(",")
    try:
        if not comma:
            raise ValueError(text)
        return [float(low), float(high)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected LOW,HIGH, two numbers, got {value}").format(value=repr(text))
        ) from None


def add_columns(parser) -> None:
    """--column and --recorded, as evaluate and init take them."""
    parser.add_argument(
        "--column",
        action="append",
        type=column_role,
        default=[],
        metavar="NAME=ROLE",
        help="a column's role: input, expected (the reference the metric gets as "
        "`expected`; `output` is the same), ignore, or a person's judgement of the row: "
        "human (a score or a label, as its values say), human_score, human_label, note; "
        "repeatable (the others are guessed by their names)",
    )
    parser.add_argument(
        "--recorded", metavar="COLUMN", help="the column of recorded outputs to score"
    )


def add_human(parser) -> None:
    """How a human score or label column is read, where its values do not say it."""
    parser.add_argument(
        "--human-scale",
        metavar="LOW,HIGH",
        type=number_pair,
        help="the scale of the human score column (else its lowest and highest values)",
    )
    parser.add_argument(
        "--human-labels",
        metavar="LABELS",
        help="the human label column's labels, lowest first, separated by commas "
        "(else read from its values)",
    )
    parser.add_argument(
        "--pass-score",
        metavar="SCORE",
        type=float,
        help="the metric score from which its verdict is the higher human label (0.5)",
    )


def add(commands, common) -> None:
    parser = commands.add_parser(
        "evaluate",
        parents=[common],
        help="score a dataset's recorded outputs with a metric.py",
        description="Upload DATA, save METRIC as a version of one of your metrics (a new "
        "version only when it changed), and score DATA's recorded outputs with it in the "
        "workbench's worker. Exit 0 when it finished with every case valid (or no more "
        "cases not valid than --max-invalid) and a mean of at least --min-mean; 1 when a "
        "case more failed, it has no mean, it was cancelled or it failed.",
    )
    parser.add_argument(
        "metric", metavar="METRIC", nargs="?", help="the metric.py that scores (else skynet.toml's)"
    )
    parser.add_argument(
        "data",
        metavar="DATA",
        nargs="?",
        help="a CSV or JSON Lines file of recorded outputs (else skynet.toml's)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--metric",
        dest="metric_id",
        type=int,
        metavar="ID",
        help="save METRIC as a version of this metric",
    )
    which.add_argument(
        "--name",
        help="save METRIC as a version of your metric of this name (default: METRIC as given)",
    )
    add_columns(parser)
    add_human(parser)
    scorings = parser.add_mutually_exclusive_group()
    scorings.add_argument(
        "--twice", action="store_true", help="score each case twice, to find flaky cases"
    )
    scorings.add_argument(
        "--repeats",
        type=repeats_count,
        metavar="K",
        help="score each case K times in all (2 to 5), each in a fresh process, to "
        "measure a judge's own noise: the share of cases whose verdict changes, with its "
        "95%% interval; costs K times the model calls",
    )
    rows = parser.add_mutually_exclusive_group()
    rows.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N rows")
    rows.add_argument("--all", action="store_true", help="every row (default: the server's sample)")
    parser.add_argument("--sample-seed", type=int, metavar="SEED", help="the sample's seed")
    parser.add_argument("--split", choices=SPLITS, help="only this split's rows (default: all)")
    parser.add_argument(
        "--min-mean",
        type=float,
        metavar="X",
        help="exit 1 when the mean score of the valid cases is below X",
    )
    parser.add_argument(
        "--max-invalid",
        type=max_invalid,
        metavar="N|P%",
        help="how many cases may be not valid, as a count (3) or a share of the cases "
        "scored (5%%); default 0: any case that is not valid fails",
    )
    parser.add_argument(
        "--download", metavar="FILE", help="write every case to FILE (.csv or .jsonl)"
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="NAME",
        help="a name for the version of METRIC saved (a commit, a branch); repeatable. "
        "Default in CI: the commit (GITHUB_SHA or CI_COMMIT_SHA) and the branch",
    )
    parser.add_argument(
        "--baseline",
        metavar="REF",
        help="compare with another version on the same data: its number, a label, or "
        "latest-passed; its evaluation is reused when one exists",
    )
    parser.add_argument(
        "--max-drop",
        type=max_drop,
        default=0.0,
        metavar="X",
        help="with --baseline: exit 1 when the mean falls by more than X (default 0)",
    )
    add_reports(parser)
    project.add_option(parser)
    parser.set_defaults(func=run)


def run(args, output) -> int:
    project.apply_evaluate(
        args, project.load(args), column_role=column_role, max_invalid=max_invalid, splits=SPLITS
    )
    project.require(args, "metric", "data")
    target = Path(args.download) if args.download else None
    if target is not None and target.suffix.lower() not in DOWNLOADS:
        raise Stop(
            USAGE,
            _("--download must name a .csv or .jsonl file, not {file}").format(file=args.download),
        )
    source = read_text(args.metric, "metric.py")
    data = read_bytes(args.data, _("The dataset"))
    with api(args) as client:
        dataset = dataset_on_server(client, Path(args.data).name, data, output)
        hint = expected_hint(dataset, args)
        if hint:
            output.note(hint)
        metric_id = find_metric(client, args)
        base = baseline.resolve(client, metric_id, args.baseline) if args.baseline else None
        metric_id, version = put_metric(client, args, source, metric_id)
        body = start_body(args, metric_id, version, dataset)
        evaluation = client.post("/evaluations", body)
        evaluation = wait_for_evaluation(
            client, evaluation, output, cancel=args.cancel_on_interrupt
        )
        if target is not None:
            fmt = target.suffix.lower().lstrip(".")
            client.download(f"/evaluations/{evaluation['id']}/download.{fmt}", target)
        gate = judge(evaluation, args.min_mean, args.max_invalid)
        compared = None
        if args.baseline and evaluation["status"] == "done":
            compared = baseline.run(client, evaluation, args, base, body, output)
        if compared is not None:
            gate["baseline"] = {k: compared[k] for k in ("version", "mean", "change", "broke")}
            if gate["passed"] and compared["reason"]:
                gate["passed"], gate["reason"] = False, compared["reason"]
        if args.junit:
            rows = of_evaluation.cases(client, evaluation)
            junit.write(of_evaluation.suite(evaluation, rows, args.metric, args.data), args.junit)
    output.document({**evaluation, "gate": gate, "baseline": compared})
    report(evaluation, gate, output, target)
    if compared is not None:
        for line in baseline.lines(compared, compared["reused"], args.max_drop):
            output.line(line)
    summary.write(
        summary.evaluation_markdown(evaluation, _first_line(evaluation, gate), gate["passed"]),
        args.summary,
    )
    if hint and not gate["passed"]:
        output.line("  " + _("hint: {text}").format(text=hint))
    return PASSED if gate["passed"] else FAILED


def expected_hint(dataset: dict, args) -> str:
    """When no column will be the expected value, what to say: the metric then gets
    `expected` None, and a metric that reads it fails on every case."""
    roles = {column["name"]: column["role"] for column in dataset.get("columns") or ()}
    roles.update(dict(args.column))
    recorded = args.recorded or dataset.get("recorded_column") or ""
    roles.pop(recorded, None)
    if "output" in roles.values():
        return ""
    inputs = [name for name, role in roles.items() if role == "input"]
    name = inputs[-1] if len(inputs) > 1 else "NAME"
    return _(
        "No column is the expected value, so the metric gets expected=None. If a column "
        "holds it, name it: --column {name}=expected"
    ).format(name=name)


def find_metric(client, args) -> int | None:
    """The id of the metric METRIC is a version of (--metric, else yours named --name or
    METRIC, the oldest of that name); None when there is none yet."""
    if args.metric_id is not None:
        return args.metric_id
    name = args.name or args.metric
    mine = sorted(metric["id"] for metric in client.get("/metrics") if metric["name"] == name)
    return mine[0] if mine else None


def put_metric(client, args, source: str, metric_id: int | None) -> tuple[int, int]:
    """METRIC saved on the server: (the metric's id, the version number that holds it).
    An unchanged text makes no new version; a name already yours makes no new metric."""
    if metric_id is None:
        # Made with version 1; the save below gives that version its labels.
        name = args.name or args.metric
        metric_id = client.post("/metrics", {"name": name, "source": source})["id"]
    saved = client.post(
        f"/metrics/{metric_id}/versions", {"source": source, "labels": labels(args)}
    )
    return metric_id, saved["number"]


def labels(args) -> list[str]:
    """--label's names, else in a CI job its commit and branch."""
    return args.label or baseline.ci_labels()


def start_body(args, metric_id: int, version: int, dataset: dict) -> dict:
    body: dict = {"metric_id": metric_id, "version": version, "dataset_id": dataset["id"]}
    if args.column:
        body["columns"] = dict(args.column)
    if args.recorded:
        body["recorded_column"] = args.recorded
    if getattr(args, "human_scale", None):
        body["human_scale"] = args.human_scale
    if getattr(args, "human_labels", None):
        body["human_classes"] = [c.strip() for c in args.human_labels.split(",") if c.strip()]
    if getattr(args, "pass_score", None) is not None:
        body["human_threshold"] = args.pass_score
    if args.repeats is not None:
        body["second"], body["repeats"] = "repeat", args.repeats
    elif args.twice:
        body["second"], body["repeats"] = "repeat", 2
    if args.all:
        body["count"] = "every"
    elif args.sample is not None:
        body["count"], body["sample"] = "sample", args.sample
    if args.sample_seed is not None:
        body["sample_seed"] = args.sample_seed
    if args.split:
        body["split"] = args.split
    return body


REPEATS = range(2, 6)


def repeats_count(text: str) -> int:
    """--repeats' value: how many times each case is scored in all, 2 to 5."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in REPEATS:
        raise argparse.ArgumentTypeError(
            _("a case is scored 2 to 5 times in all, got {value}").format(value=repr(text))
        )
    return value


def max_invalid(text: str) -> tuple[float, bool]:
    """--max-invalid's value: (count, False) for "N", (share, True) for "P%"."""
    share = text.endswith("%")
    number = text[:-1] if share else text
    try:
        value = float(number) if share else int(number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a count of cases (3) or a percentage (5%), got {value}").format(
                value=repr(text)
            )
        ) from None
    if share and not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(
            _("a percentage lies between 0% and 100%, got {value}").format(value=repr(text))
        )
    if value < 0:
        raise argparse.ArgumentTypeError(
            _("a count of cases is 0 or more, got {value}").format(value=repr(text))
        )
    return value, share


def max_drop(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a number, got {value}").format(value=repr(text))
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            _("a drop is 0 or more, got {value}").format(value=repr(text))
        )
    return value


def allowed_invalid(limit: tuple[float, bool], cases: int) -> int:
    """How many of `cases` may be not valid under --max-invalid."""
    value, share = limit
    return int(value * cases // 100) if share else int(value)


def judge(evaluation: dict, min_mean: float | None, limit: tuple[float, bool] = (0, False)) -> dict:
    """Whether the evaluation passes, counted over every case: it finished, no more cases
    than --max-invalid allows are not valid, it has a mean, and the mean reaches
    --min-mean. A mean over the valid cases alone is no pass: 4 valid cases of 10 can
    average 1.0."""
    summary = evaluation.get("summary") or {}
    mean = summary.get("mean")
    cases = summary.get("cases") or 0
    failed = summary.get("invalid") or 0
    allowed = allowed_invalid(limit, cases)
    if evaluation["status"] != "done":
        reason = "cancelled" if evaluation["failure"] == "cancelled" else "failed"
    elif not cases:
        reason = "no_cases"
    elif failed > allowed:
        reason = "cases_failed"
    elif mean is None:
        reason = "no_mean"
    elif min_mean is not None and mean < min_mean:
        reason = "below_min_mean"
    else:
        reason = "passed"
    return {
        "passed": reason == "passed",
        "reason": reason,
        "mean": mean,
        "min_mean": min_mean,
        "cases": cases,
        "failed": failed,
        "max_invalid": allowed,
    }


def _first_line(evaluation: dict, gate: dict) -> str:
    """The verdict and its reason on one line: what -q still prints on a failure."""
    reason = gate["reason"]
    said = (evaluation.get("verdict") or {}).get("text") or evaluation.get("failure_message")
    mean = number(gate["mean"])
    allows = _("(--max-invalid allows {count})").format(count=gate["max_invalid"])
    if reason == "passed":
        line = f"{_('PASSED')}  " + _("mean {mean} · {verdict}").format(mean=mean, verdict=said)
        return f"{line} {allows}" if gate["failed"] else line
    failed = _("FAILED")
    if reason == "below_min_mean":
        line = _("mean {mean} is below --min-mean {bar}").format(
            mean=mean, bar=number(gate["min_mean"])
        )
        score = (evaluation.get("summary") or {}).get("score") or {}
        top = score.get("max")
        if top is not None and gate["min_mean"] > top:
            line += " " + _("(no valid case scored above {top})").format(top=number(top))
        return f"{failed}  {line}"
    if reason == "case_broke":
        base = gate["baseline"]
        line = ngettext(
            "{count} case valid under version {version} is not valid now",
            "{count} cases valid under version {version} are not valid now",
            base["broke"],
        ).format(count=base["broke"], version=base["version"])
        return f"{failed}  {line}"
    if reason == "mean_dropped":
        base = gate["baseline"]
        line = _(
            "the mean fell from {before} (version {version}) to {now}, more than --max-drop allows"
        ).format(before=number(base["mean"]), version=base["version"], now=mean)
        return f"{failed}  {line}"
    if reason == "no_mean":
        line = _("no valid case has a score, so there is no mean · {verdict}").format(verdict=said)
        return f"{failed}  {line}"
    if reason == "cases_failed" and gate["max_invalid"]:
        return f"{failed}  {said} {allows}"
    return f"{failed}  {said}"


def _percent(share: float | None) -> str:
    return _("none") if share is None else f"{share * 100:.0f}%"


def noise_line(noise: dict | None) -> str:
    """What scoring each case K times measured, on one line ("" when it was not)."""
    if not noise or not noise.get("n"):
        return ""
    flips = noise.get("flip_share") or {}
    line = _(
        "scored {times} times: {share} of cases changed verdict (95% interval {low}–{high})"
    ).format(
        times=noise.get("k"),
        share=_percent(flips.get("value")),
        low=_percent(flips.get("low")),
        high=_percent(flips.get("high")),
    )
    mean = noise.get("mean") or {}
    if mean.get("value") is not None:
        line += " · " + _("mean {mean} (95% interval {low}–{high})").format(
            mean=number(mean["value"]), low=number(mean.get("low")), high=number(mean.get("high"))
        )
    return line


def report(evaluation: dict, gate: dict, output, target: Path | None) -> None:
    first = _first_line(evaluation, gate)
    if gate["passed"]:
        output.line(first, style="bold green")
    else:
        output.failure(first)
    summary = evaluation.get("summary")
    if summary:
        # How the cases that were not valid ended (valid ones are counted already).
        others = ", ".join(
            f"{case_status(status)} {count}"
            for status, count in summary["counts"].items()
            if count and status != "valid"
        )
        line = "  " + ngettext(
            "{valid} valid, {invalid} not valid of {cases} case",
            "{valid} valid, {invalid} not valid of {cases} cases",
            summary["cases"],
        ).format(valid=summary["valid"], invalid=summary["invalid"], cases=summary["cases"])
        output.line(f"{line} ({others})" if others else line)
        said = noise_line(summary.get("noise"))
        if said:
            output.line("  " + said)
        for name, stats in summary["named"].items():
            said = _("{name}: mean {mean} over {count}")
            output.line("  " + said.format(name=name, mean=number(stats["mean"]), count=stats["n"]))
        for line in people_lines(summary.get("human")):
            output.line("  " + line)
        for group in summary["failures"]:
            output.line(f"  {group['count']} × {group['status']}: {group['message']}")
            if group.get("fix"):
                output.line("      " + _("fix: {text}").format(text=group["fix"]))
    if target is not None:
        output.line("  " + _("cases written to {file}").format(file=target))
    output.line(f"  {evaluation['page']}")


def _figure(figure: dict | None) -> str:
    """A figure and its 95% interval, as the results page writes them."""
    figure = figure or {}
    value = number(figure.get("value")) if figure.get("value") is not None else "—"
    if figure.get("low") is None or figure.get("high") is None:
        return value
    return _("{value} (95% interval {low} to {high})").format(
        value=value, low=number(figure["low"]), high=number(figure["high"])
    )


def people_lines(human: dict | None) -> list[str]:
    """How the metric agrees with people, for an evaluation with human columns."""
    if not human:
        return []
    first = human.get("first") or {}
    lines = [_("agreement with people over {count} rows:").format(count=human.get("compared", 0))]
    if human.get("kind") == "label":
        lines.append("  " + _("accuracy {figure}").format(figure=_figure(first.get("accuracy"))))
        lines.append("  " + _("Cohen's kappa {figure}").format(figure=_figure(first.get("kappa"))))
    else:
        lines.append("  " + _("Spearman {figure}").format(figure=_figure(first.get("spearman"))))
        lines.append(
            "  " + _("Kendall's tau {figure}").format(figure=_figure(first.get("kendall")))
        )
        lines.append(
            "  " + _("mean absolute difference {figure}").format(figure=_figure(first.get("mad")))
        )
    return lines
