"""`skynet evaluate --baseline REF`: the same dataset scored by another version of the
metric (a number, a label such as a branch, or `latest-passed`), its evaluation reused when
one with the same settings exists and started when none does, and the two compared case by
case: the mean's change, how many cases scored the same, and the cases that got worse.

It fails the job when the mean dropped more than --max-drop, or when a case that was valid
under the baseline is not valid now."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from skynet_client.exits import USAGE, Stop
from skynet_client.reports.of_evaluation import cases as all_cases
from skynet_client.waiting import wait_for_evaluation
from skynet_client.words import _, case_status, ngettext, number

LATEST_PASSED = "latest-passed"
SAME = 1e-9  # scores closer than this are the same score
SHOWN = 10  # cases that got worse, printed at most
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}")


def ci_labels(environ=os.environ) -> list[str]:
    """The labels a CI job's version gets when --label is not given: its commit (12
    characters) and its branch, from GitHub Actions' or GitLab CI's variables."""
    found = []
    sha = environ.get("GITHUB_SHA") or environ.get("CI_COMMIT_SHA")
    if sha:
        found.append(sha[:12])
    branch = environ.get("GITHUB_REF_NAME") or environ.get("CI_COMMIT_REF_NAME")
    if branch:
        found.append(branch)
    return [label for label in found if LABEL.fullmatch(label)]


def resolve(client, metric_id: int | None, ref: str) -> int | None:
    """The version REF names, read before this run saves and labels its own version: a
    label names the version it pointed at until now (on the main branch, `--baseline main`
    is where main was, not this very version). None for latest-passed, which is found
    among the evaluations afterwards."""
    if ref == LATEST_PASSED:
        return None
    if ref.isdigit():
        return int(ref)
    if metric_id is not None:
        for version in client.get(f"/metrics/{metric_id}/versions"):
            if ref in version.get("labels") or ():
                return version["number"]
    raise Stop(
        USAGE, _("No version of this metric carries the label {label}.").format(label=repr(ref))
    )


def _same_settings(candidate: dict, evaluation: dict) -> bool:
    return (
        candidate["dataset_id"] == evaluation["dataset_id"]
        and candidate.get("settings") == evaluation.get("settings")
        and candidate["status"] == "done"
    )


def find(client, evaluation: dict, ref: str, number: int | None) -> tuple[int, dict | None]:
    """(the baseline's version number, its evaluation with the same settings or None)."""
    metric_id, current = evaluation["metric_id"], evaluation["version"]
    listed = client.get(
        "/evaluations", params={"metric_id": metric_id, "dataset_id": evaluation["dataset_id"]}
    )
    if ref == LATEST_PASSED:
        for candidate in listed:
            if candidate["version"] != current and candidate["passed"]:
                if _same_settings(candidate, evaluation):
                    return candidate["version"], candidate
        said = _(
            "No earlier version of metric {id} passed an evaluation of this dataset with these "
            "settings: there is no latest-passed baseline yet."
        )
        raise Stop(USAGE, said.format(id=metric_id))
    for candidate in listed:
        if candidate["version"] == number and _same_settings(candidate, evaluation):
            return number, candidate
    return number, None


def baseline_evaluation(
    client, evaluation: dict, ref: str, number: int | None, body: dict, output, cancel: bool
):
    """The baseline's finished evaluation, and whether it was reused."""
    number, found = find(client, evaluation, ref, number)
    if found is not None:
        output.note(
            _("Baseline: version {version}, evaluation {id} (reused).").format(
                version=number, id=found["id"]
            )
        )
        return client.get(f"/evaluations/{found['id']}"), True
    output.note(
        _("Baseline: version {version}, scoring the dataset with it now.").format(version=number)
    )
    started = client.post("/evaluations", {**body, "version": number})
    return wait_for_evaluation(client, started, output, cancel=cancel), False


def compare(
    before: dict, now: dict, before_cases: Iterable[dict], now_cases: Iterable[dict]
) -> dict:
    """The two evaluations case by case: the means, the cases that scored the same, the
    cases that broke (valid before, not now) and those whose score fell."""
    old = {case["index"]: case for case in before_cases}
    same, worse, broke, both = 0, [], 0, 0
    for case in now_cases:
        was = old.get(case["index"])
        if was is None:
            continue
        both += 1
        valid_then, valid_now = was["status"] == "valid", case["status"] == "valid"
        if was["status"] == case["status"] and (
            not valid_now or abs((was["score"] or 0) - (case["score"] or 0)) <= SAME
        ):
            same += 1
            continue
        fell = valid_then and valid_now and (case["score"] or 0) < (was["score"] or 0) - SAME
        if valid_then and not valid_now:
            broke += 1
        if fell or (valid_then and not valid_now):
            worse.append(
                {
                    "index": case["index"],
                    "number": case["number"],
                    "row": case["row"],
                    "before": {k: was[k] for k in ("status", "score", "feedback", "message")},
                    "now": {k: case[k] for k in ("status", "score", "feedback", "message")},
                }
            )
    mean_then = (before.get("summary") or {}).get("mean")
    mean_now = (now.get("summary") or {}).get("mean")
    change = None if mean_then is None or mean_now is None else mean_now - mean_then
    return {
        "evaluation": before["id"],
        "version": before["version"],
        "mean": mean_then,
        "mean_now": mean_now,
        "change": change,
        "cases": both,
        "same": same,
        "broke": broke,
        "worse": worse,
    }


def judged(comparison: dict, max_drop: float) -> str:
    """'' when the comparison passes, else why not: a case broke, or the mean fell."""
    if comparison["broke"]:
        return "case_broke"
    change = comparison["change"]
    if comparison["mean"] is not None and comparison["mean_now"] is None:
        return "mean_dropped"
    if change is not None and -change > max_drop + SAME:
        return "mean_dropped"
    return ""


def _score(side: dict) -> str:
    return "—" if side["score"] is None else f"{side['score']:.4g}"


def lines(comparison: dict, reused: bool, max_drop: float) -> list[str]:
    change = comparison["change"]
    said = [
        "  "
        + (
            _("baseline: version {version}, evaluation {id} (reused)")
            if reused
            else _("baseline: version {version}, evaluation {id}")
        ).format(version=comparison["version"], id=comparison["evaluation"]),
    ]
    means = _("mean {before} → {now}").format(
        before=number(comparison["mean"]), now=number(comparison["mean_now"])
    )
    if change is not None:
        means += f" ({change:+.4g}; --max-drop {max_drop:g})"
    same = ngettext(
        "{same} of {count} case scored the same",
        "{same} of {count} cases scored the same",
        comparison["cases"],
    ).format(same=comparison["same"], count=comparison["cases"])
    said.append(f"  {means}; {same}")
    worse = comparison["worse"]
    if worse:
        said.append(
            "  "
            + ngettext(
                "{count} case got worse ({broke} no longer valid):",
                "{count} cases got worse ({broke} no longer valid):",
                len(worse),
            ).format(count=len(worse), broke=comparison["broke"])
        )
    for case in worse[:SHOWN]:
        before, now = case["before"], case["now"]
        said.append(
            "    "
            + _("case {number} (row {row}): {before} → {now}").format(
                number=case["number"],
                row=case["row"],
                before=f"{case_status(before['status'])} {_score(before)}",
                now=f"{case_status(now['status'])} {_score(now)}",
            )
        )
        said.append(
            "      " + _("before: {text}").format(text=before["feedback"] or before["message"])
        )
        said.append("      " + _("now:    {text}").format(text=now["feedback"] or now["message"]))
    if len(worse) > SHOWN:
        said.append(
            "    "
            + _("… and {count} more (--json lists them all)").format(count=len(worse) - SHOWN)
        )
    return said


def run(client, evaluation: dict, args, number: int | None, body: dict, output) -> dict | None:
    """The comparison with the baseline; None when the baseline is this very version (an
    unchanged metric on the branch it names): there is nothing to compare."""
    if number == evaluation["version"]:
        output.note(
            _("The baseline {ref} is this very version: nothing to compare.").format(
                ref=repr(args.baseline)
            )
        )
        return None
    before, reused = baseline_evaluation(
        client, evaluation, args.baseline, number, body, output, args.cancel_on_interrupt
    )
    comparison = compare(
        before, evaluation, all_cases(client, before), all_cases(client, evaluation)
    )
    comparison["reused"] = reused
    comparison["reason"] = judged(comparison, args.max_drop)
    return comparison
