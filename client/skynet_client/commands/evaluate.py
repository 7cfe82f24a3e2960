"""`skynet evaluate metric.py data.csv`: score a dataset's recorded outputs with a metric
in the server's worker, as the playground's Evaluate page does, and say whether the mean
score is good enough."""

from __future__ import annotations

import argparse
from pathlib import Path

from skynet_client.commands.common import api, dataset_on_server, read_bytes, read_text
from skynet_client.exits import FAILED, PASSED, USAGE, Stop
from skynet_client.waiting import wait_for_evaluation

ROLES = ("input", "output", "ignore")
SPLITS = ("all", "train", "validation", "test")
DOWNLOADS = (".csv", ".jsonl")


def column_role(text: str) -> tuple[str, str]:
    name, equals, role = text.rpartition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=ROLE, got {text!r}")
    if role not in ROLES:
        raise argparse.ArgumentTypeError(f"ROLE must be one of {', '.join(ROLES)}, got {role!r}")
    return name, role


def add(commands, common) -> None:
    parser = commands.add_parser(
        "evaluate",
        parents=[common],
        help="score a dataset's recorded outputs with a metric.py",
        description="Upload DATA, save METRIC as a version of one of your metrics (a new "
        "version only when it changed), and score DATA's recorded outputs with it in the "
        "workbench's worker. Exit 0 when it finished (and its mean is at least --min-mean), "
        "1 when it failed, was cancelled or its mean is below --min-mean.",
    )
    parser.add_argument("metric", metavar="METRIC", help="the metric.py that scores")
    parser.add_argument("data", metavar="DATA", help="a CSV or JSON Lines file of recorded outputs")
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
    parser.add_argument(
        "--column",
        action="append",
        type=column_role,
        default=[],
        metavar="NAME=ROLE",
        help="a column's role: input, output (the expected value) or ignore; repeatable "
        "(the server guesses the others)",
    )
    parser.add_argument(
        "--recorded", metavar="COLUMN", help="the column of recorded outputs to score"
    )
    parser.add_argument(
        "--twice", action="store_true", help="score each case twice, to find flaky cases"
    )
    rows = parser.add_mutually_exclusive_group()
    rows.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N rows")
    rows.add_argument("--all", action="store_true", help="every row (default: the server's sample)")
    parser.add_argument("--sample-seed", type=int, metavar="SEED", help="the sample's seed")
    parser.add_argument("--split", choices=SPLITS, help="only this split's rows (default: all)")
    parser.add_argument(
        "--min-mean", type=float, metavar="X", help="exit 1 when the mean score is below X"
    )
    parser.add_argument(
        "--download", metavar="FILE", help="write every case to FILE (.csv or .jsonl)"
    )
    parser.set_defaults(func=run)


def run(args, output) -> int:
    target = Path(args.download) if args.download else None
    if target is not None and target.suffix.lower() not in DOWNLOADS:
        raise Stop(USAGE, f"--download must name a .csv or .jsonl file, not {args.download}")
    source = read_text(args.metric, "metric.py")
    data = read_bytes(args.data, "The dataset")
    with api(args) as client:
        dataset = dataset_on_server(client, Path(args.data).name, data, output)
        metric_id, version = put_metric(client, args, source)
        evaluation = client.post("/evaluations", start_body(args, metric_id, version, dataset))
        evaluation = wait_for_evaluation(client, evaluation, output)
        if target is not None:
            fmt = target.suffix.lower().lstrip(".")
            client.download(f"/evaluations/{evaluation['id']}/download.{fmt}", target)
    verdict = judge(evaluation, args.min_mean)
    output.document({**evaluation, "verdict": verdict})
    report(evaluation, verdict, output, target)
    return PASSED if verdict["passed"] else FAILED


def put_metric(client, args, source: str) -> tuple[int, int]:
    """METRIC saved on the server: (the metric's id, the version number that holds it).
    An unchanged text makes no new version; a name already yours makes no new metric."""
    metric_id = args.metric_id
    if metric_id is None:
        name = args.name or args.metric
        mine = sorted(
            (metric for metric in client.get("/metrics") if metric["name"] == name),
            key=lambda metric: metric["id"],
        )
        if not mine:
            created = client.post("/metrics", {"name": name, "source": source})
            return created["id"], created["latest_version"]
        metric_id = mine[0]["id"]
    saved = client.post(f"/metrics/{metric_id}/versions", {"source": source})
    return metric_id, saved["number"]


def start_body(args, metric_id: int, version: int, dataset: dict) -> dict:
    body: dict = {"metric_id": metric_id, "version": version, "dataset_id": dataset["id"]}
    if args.column:
        body["columns"] = dict(args.column)
    if args.recorded:
        body["recorded_column"] = args.recorded
    if args.twice:
        body["second"] = "repeat"
    if args.all:
        body["count"] = "every"
    elif args.sample is not None:
        body["count"], body["sample"] = "sample", args.sample
    if args.sample_seed is not None:
        body["sample_seed"] = args.sample_seed
    if args.split:
        body["split"] = args.split
    return body


def judge(evaluation: dict, min_mean: float | None) -> dict:
    """Whether the evaluation passes: it finished, and its mean is at least min_mean."""
    mean = (evaluation.get("summary") or {}).get("mean")
    if evaluation["status"] != "done":
        reason = "cancelled" if evaluation["failure"] == "cancelled" else "failed"
    elif min_mean is not None and (mean is None or mean < min_mean):
        reason = "below_min_mean"
    else:
        reason = "done"
    return {"passed": reason == "done", "reason": reason, "mean": mean, "min_mean": min_mean}


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:.4g}"


def report(evaluation: dict, verdict: dict, output, target: Path | None) -> None:
    reason = verdict["reason"]
    if reason == "done":
        output.line(f"DONE  mean {_number(verdict['mean'])}", style="bold green")
    elif reason == "below_min_mean":
        output.line(
            f"BELOW  mean {_number(verdict['mean'])} is below --min-mean "
            f"{_number(verdict['min_mean'])}",
            style="bold red",
        )
    else:
        output.line(f"{reason.upper()}  {evaluation['failure_message']}", style="bold red")
    summary = evaluation.get("summary")
    if summary:
        # How the cases that were not valid ended (valid ones are counted already).
        others = ", ".join(
            f"{status} {count}"
            for status, count in summary["counts"].items()
            if count and status != "valid"
        )
        line = f"  {summary['valid']} valid, {summary['invalid']} not valid of {summary['cases']} cases"
        output.line(f"{line} ({others})" if others else line)
        for name, stats in summary["named"].items():
            output.line(f"  {name}: mean {_number(stats['mean'])} over {stats['n']}")
        for group in summary["failures"]:
            output.line(f"  {group['count']} × {group['status']}: {group['message']}")
    if target is not None:
        output.line(f"  cases written to {target}")
    output.line(f"  {evaluation['page']}")
