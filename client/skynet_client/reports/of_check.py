"""A check's document (GET /api/v1/checks/N) as CI reports: its JUnit suite, its GitHub
annotations and its Markdown summary. One testcase per stage and per case."""

from __future__ import annotations

from skynet_client.reports.junit import Case, Suite

FAILED_STAGE = "failed"


def _line(params: dict | None) -> int | None:
    line = (params or {}).get("line")
    return line if isinstance(line, int) and line > 0 else None


def _named_line(params: dict | None) -> int | None:
    """The line params name: their own, else their first candidate's (a metric written
    for DSPy or gepa, found where `score` was looked for)."""
    params = params or {}
    candidates = params.get("candidates") or [None]
    return _line(params) or (_line(candidates[0]) if isinstance(candidates[0], dict) else None)


def stage_line(stage: dict) -> int | None:
    """The metric.py line a failed stage names (a syntax error, a bad signature, the
    function that should have been `score`)."""
    found = _named_line(stage.get("params"))
    for problem in stage.get("problems") or ():
        found = found or _named_line(problem.get("params"))
    return found


def case_line(case: dict) -> int | None:
    """The metric.py line of a case's problem: the return that gave a bad value, else the
    innermost line of metric.py in the exception's traceback."""
    returned = case.get("returned_at") or {}
    if isinstance(returned.get("line"), int):
        return returned["line"]
    for frame in reversed(case.get("traceback") or ()):
        if isinstance(frame, dict) and isinstance(frame.get("line"), int):
            return frame["line"]
    return None


def _case_text(case: dict) -> str:
    parts = [case.get("message") or case.get("status_label") or ""]
    if case.get("feedback"):
        parts.append(f"feedback: {case['feedback']}")
    if case.get("fix"):
        parts.append(f"fix: {case['fix']}")
    return "\n".join(part for part in parts if part)


def suite(check: dict, metric_path: str) -> Suite:
    result = check.get("result") or {}
    found = Suite(
        name=f"skynet check {metric_path}",
        properties={"check": str(check["id"]), "page": check.get("page", "")},
    )
    for stage in result.get("stages") or ():
        case = Case(classname="skynet.check.stage", name=stage["name"], file=metric_path)
        if stage["status"] == FAILED_STAGE:
            case.outcome, case.kind = "failure", stage.get("problem") or "failed"
            case.message = stage.get("message") or stage["status_label"]
            case.text = "\n".join([case.message, *(stage.get("details") or ())])
            case.line = stage_line(stage)
        elif stage["status"] != "passed":
            case.outcome, case.message = "skipped", stage["status_label"]
        found.cases.append(case)
    for row in result.get("cases") or ():
        case = Case(
            classname="skynet.check.case",
            name=f"case {row['number']}",
            seconds=(row.get("duration_ms") or 0) / 1000,
            file=metric_path,
        )
        if row["status"] == "skipped" or row["status"] == "pending":
            case.outcome, case.message = "skipped", row["status_label"]
        elif row["status"] != "valid":
            case.outcome, case.kind = "failure", row.get("problem") or row["status"]
            case.message = row.get("message") or row["status_label"]
            case.text = _case_text(row)
            case.line = case_line(row)
        found.cases.append(case)
    if not found.cases:  # a check that ended before its stages (cancelled, lost)
        found.cases.append(
            Case(
                classname="skynet.check",
                name="contract check",
                outcome="passed" if check["passed"] else "failure",
                message="" if check["passed"] else check["message"],
                kind=check.get("failure") or "failed",
            )
        )
    return found


def annotations(check: dict, metric_path: str) -> list[dict]:
    """Where the failed check points in metric.py: {file, line, title, message}."""
    found = []
    for case in suite(check, metric_path).cases:
        if case.outcome == "failure":
            found.append(
                {"file": metric_path, "line": case.line, "title": case.name, "message": case.text}
            )
    return found
