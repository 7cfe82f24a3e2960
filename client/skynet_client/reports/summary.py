"""A Markdown summary of a check or an evaluation: appended to $GITHUB_STEP_SUMMARY when
GitHub Actions sets it, or written to --summary FILE. It says the verdict, the mean, the
distribution, the failure groups and the link, as the page does."""

from __future__ import annotations

import os
from pathlib import Path

from skynet_client.exits import USAGE, Stop
from skynet_client.words import _

BAR = 24  # the widest bar of the distribution, in characters


def _cell(text: object) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def check_markdown(check: dict, first_line: str) -> str:
    result = check.get("result") or {}
    lines = [f"### {'✅' if check['passed'] else '❌'} {first_line}", ""]
    stages = result.get("stages") or []
    if stages:
        lines += [f"| {_('Stage')} | {_('Status')} | |", "| --- | --- | --- |"]
        lines += [
            f"| {_cell(s['name'])} | {_cell(s['status_label'])} | {_cell(s.get('message') or '')} |"
            for s in stages
        ]
        lines.append("")
    rows = result.get("cases") or []
    if rows:
        lines += [
            f"| {_('Case')} | {_('Status')} | {_('Score')} | {_('Problem')} | {_('Feedback')} |",
            "| --- | --- | --- | --- | --- |",
        ]
        for row in rows:
            score = "" if row.get("score") is None else _number(row["score"])
            lines.append(
                f"| {row['number']} | {_cell(row['status_label'])} | {score} "
                f"| {_cell(row.get('message') or '')} | {_cell(row.get('feedback') or '')} |"
            )
        lines.append("")
        for row in rows:
            if row.get("fix"):
                said = _("Fix for case {number}:").format(number=row["number"])
                lines += [said, "", "```python", row["fix"], "```", ""]
    for hint in result.get("hints") or ():
        lines.append(f"- {hint['message']}")
    lines += ["", f"[{_('The check on the workbench')}]({check.get('page', '')})", ""]
    return "\n".join(lines)


def _distribution(bins: list[dict]) -> list[str]:
    if not bins:
        return []
    most = max(b["count"] for b in bins) or 1
    lines = ["```"]
    for b in bins:
        bar = "█" * round(BAR * b["count"] / most)
        lines.append(f"{_number(b['lo']):>7} – {_number(b['hi']):<7} {bar} {b['count']}")
    return [*lines, "```", ""]


def evaluation_markdown(evaluation: dict, first_line: str, passed: bool) -> str:
    summary = evaluation.get("summary") or {}
    lines = [f"### {'✅' if passed else '❌'} {first_line}", ""]
    if summary:
        lines += [
            "| "
            + " | ".join(
                (
                    _("Cases"),
                    _("Valid"),
                    _("Not valid"),
                    _("Mean"),
                    _("Median"),
                    _("Min"),
                    _("Max"),
                )
            )
            + " |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            f"| {summary['cases']} | {summary['valid']} | {summary['invalid']} "
            f"| {_number(summary['mean'])} | {_number(summary['score']['median'])} "
            f"| {_number(summary['score']['min'])} | {_number(summary['score']['max'])} |",
            "",
        ]
        lines += _distribution(summary["score"].get("bins") or [])
        groups = summary.get("failures") or []
        if groups:
            lines += [f"| {_('Cases')} | {_('Status')} | {_('Problem')} |", "| --- | --- | --- |"]
            lines += [
                f"| {g['count']} | {_cell(g['status'])} | {_cell(g['message'])} |" for g in groups
            ]
            lines.append("")
    lines += [f"[{_('The evaluation on the workbench')}]({evaluation.get('page', '')})", ""]
    return "\n".join(lines)


def write(markdown: str, target: str | None) -> None:
    """To `target` (--summary), else appended to $GITHUB_STEP_SUMMARY when it is set."""
    path, mode = (target, "w") if target else (os.environ.get("GITHUB_STEP_SUMMARY"), "a")
    if not path:
        return
    try:
        with Path(path).open(mode, encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as error:
        said = _("Cannot write the summary {file}: {error}")
        raise Stop(USAGE, said.format(file=path, error=error)) from None
