"""An evaluation's documents (GET /api/v1/evaluations/N and its pages of cases) as CI
reports: a JUnit suite with one testcase per case, and a Markdown summary."""

from __future__ import annotations

from collections.abc import Iterable

from skynet_client.reports.junit import Case, Suite

PER_PAGE = 500


def cases(client, evaluation: dict) -> Iterable[dict]:
    """Every case of the evaluation, a page of PER_PAGE at a time."""
    page, pages = 1, 1
    while page <= pages:
        answer = client.get(
            f"/evaluations/{evaluation['id']}/cases", params={"page": page, "per_page": PER_PAGE}
        )
        yield from answer["cases"]
        page, pages = page + 1, answer["pages"]


def suite(evaluation: dict, rows: Iterable[dict], metric_path: str, data_path: str) -> Suite:
    summary = evaluation.get("summary") or {}
    # A group's fix (the return that keeps the contract) for each case of its problem.
    fixes = {group["code"]: group["fix"] for group in summary.get("failures") or () if group["fix"]}
    found = Suite(
        name=f"skynet evaluate {metric_path} {data_path}",
        properties={"evaluation": str(evaluation["id"]), "page": evaluation.get("page", "")},
    )
    for row in rows:
        case = Case(
            classname="skynet.evaluate.case",
            name=f"case {row['number']} (row {row['row']})",
            seconds=(row.get("total_ms") or 0) / 1000,
            file=metric_path,
        )
        if row["status"] == "skipped":
            case.outcome, case.message = "skipped", row["status_label"]
        elif row["status"] != "valid":
            case.outcome, case.kind = "failure", row.get("problem") or row["status"]
            case.message = row.get("message") or row["status_label"]
            parts = [case.message]
            if row.get("feedback"):
                parts.append(f"feedback: {row['feedback']}")
            if fixes.get(row.get("problem")):
                parts.append(f"fix: {fixes[row['problem']]}")
            case.text = "\n".join(parts)
        found.cases.append(case)
    if not found.cases:  # it ended before its first case
        found.cases.append(
            Case(
                classname="skynet.evaluate",
                name="evaluation",
                outcome="failure",
                message=(evaluation.get("verdict") or {}).get("text") or evaluation["status"],
                kind=evaluation.get("failure") or "failed",
            )
        )
    return found
