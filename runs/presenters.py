"""What the run page shows of a run, worked out from its row, its candidates and its
recent events, in the reader's language and number format. The view reads those (through
runs.selectors); everything here only shapes them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from evaluations.charts import number
from evaluations.presenters import duration, percent
from runs import charts, eventlog, reasons, selectors
from runs.models import Run, RunCandidate, RunEvent
from runs.results import best_of
from runs.textdiff import inline_diff
from submissions.presenters import usd
from wording import format_count

# The validation cases a table shows; the bundle's result.json has every one.
CASE_ROWS = 200

HEADINGS = {
    Run.Status.QUEUED: gettext_lazy("The run is queued"),
    Run.Status.RUNNING: gettext_lazy("The run is running"),
    Run.Status.PAUSED: gettext_lazy("The run is paused"),
    Run.Status.FINISHED: gettext_lazy("The run finished"),
    Run.Status.CANCELLED: gettext_lazy("The run was cancelled"),
    Run.Status.FAILED: gettext_lazy("The run failed"),
}
ROLES = {
    "task": gettext_lazy("Task model"),
    "metric": gettext_lazy("Metric model"),
    "reflection": gettext_lazy("Reflection model"),
}


def count(value: object) -> str:
    return format_count(value if isinstance(value, int) else 0)


def _case_keys(*score_maps: Mapping) -> list[str]:
    """The validation cases' keys (their position in the split, as text) in order."""
    keys = {key for scores in score_maps for key in scores}
    return sorted(keys, key=lambda key: (0, int(key)) if str(key).isdigit() else (1, str(key)))


def case_label(key: str) -> str:
    if str(key).isdigit():
        return _("Case %(number)s") % {"number": formats.number_format(int(key) + 1)}
    return str(key)


def _fingerprint(*parts: object) -> str:
    """A short id that changes with what a block shows: the live panel keeps a block
    the browser has (hx-preserve) while its id is the same, so reading or selecting it is
    not undone by each update."""
    text = repr(parts).encode("utf-8")
    return hashlib.blake2b(text, digest_size=5).hexdigest()


# -- where it stands -------------------------------------------------------------------


def _elapsed_s(run: Run) -> float | None:
    if run.started_at is None:
        return None
    end = run.finished_at if run.finished_at and not run.is_live else timezone.now()
    return max(0.0, (end - run.started_at).total_seconds())


def _seconds_left(run: Run, progress: Mapping, elapsed: float | None) -> float | None:
    """While it runs: the time to whichever budget it reaches first at the pace so far
    (metric calls, and dollars)."""
    if run.status != Run.Status.RUNNING or not elapsed:
        return None
    calls = progress.get("metric_calls") or 0
    budget = progress.get("max_metric_calls") or 0
    guesses = []
    if calls and budget:
        guesses.append(max(0.0, budget - calls) * elapsed / calls)
    spend = progress.get("spend") or {}
    spent, most = spend.get("total_usd") or 0.0, spend.get("max_usd") or 0.0
    if spent > 0 and most:
        guesses.append(max(0.0, most - spent) * elapsed / spent)
    return min(guesses) if guesses else None


def standing(run: Run) -> dict:
    """The status panel: the status in words and why, the metric calls against the
    budget, the time, the attempts and what the reader can do now."""
    progress = run.progress or {}
    budget = (run.config or {}).get("budget") or {}
    calls = int(progress.get("metric_calls") or 0)
    max_calls = int(progress.get("max_metric_calls") or budget.get("metric_calls") or 0)
    elapsed = _elapsed_s(run)
    best = progress.get("best") or {}
    candidates = int(progress.get("candidates") or 0)
    resumed = max(0, run.attempt - 1)
    return {
        "status": run.status,
        "label": run.get_status_display(),
        "heading": HEADINGS.get(run.status, run.get_status_display()),
        "live": run.is_live,
        "final": run.is_final,
        "reason": reasons.stop_text(run) or reasons.failure_text(run),
        "bad": run.status in (Run.Status.PAUSED, Run.Status.FAILED),
        "doing": reasons.waiting_text(run),
        "stopping": run.status == Run.Status.RUNNING and run.cancel_requested,
        "can_cancel": run.status in (Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.PAUSED)
        and not run.cancel_requested,
        "can_resume": run.status == Run.Status.PAUSED,
        "calls": calls,
        "max_calls": max_calls,
        "calls_text": _("%(calls)s of %(budget)s metric calls (%(share)s)")
        % {
            "calls": format_count(calls),
            "budget": format_count(max_calls),
            "share": percent(min(1.0, calls / max_calls)) if max_calls else "—",
        },
        "iteration": count(progress.get("iteration")),
        "candidates": format_count(candidates),
        "best_text": (
            _("%(score)s, candidate %(candidate)s (the starting candidate scored %(seed)s)")
            % {
                "score": number(best.get("score")),
                "candidate": best.get("idx", 0),
                "seed": number(progress.get("seed_score")),
            }
            if candidates
            else "—"
        ),
        "elapsed_label": _("Running for") if run.is_live else _("Ran for"),
        "elapsed_text": duration(elapsed) if elapsed is not None else "—",
        "left_text": duration(_seconds_left(run, progress, elapsed)),
        "resumed_text": (
            ngettext("Resumed %(count)s time", "Resumed %(count)s times", resumed)
            % {"count": format_count(resumed)}
            if resumed
            else ""
        ),
    }


def spending(run: Run) -> dict:
    """What the run spent on each of its three models, and in all against its budget."""
    spend = (run.progress or {}).get("spend") or {}
    budget = (run.config or {}).get("budget") or {}
    most = float(spend.get("max_usd") or budget.get("usd") or 0.0)
    total = float(spend.get("total_usd") or 0.0)
    rows = [
        {
            "role": role,
            "label": label,
            "usd": usd(float(spend.get(f"{role}_usd") or 0.0)),
            "calls": count(spend.get(f"{role}_calls")),
        }
        for role, label in ROLES.items()
    ]
    return {
        "rows": rows,
        "total": usd(total),
        "max": usd(most) if most else "—",
        "total_value": round(min(total, most) if most else total, 6),
        "max_value": round(most, 6),
        "total_text": _("%(spent)s of %(budget)s") % {"spent": usd(total), "budget": usd(most)}
        if most
        else usd(total),
        "calls": count(
            sum(int(spend.get(f"{role}_calls") or 0) for role in ROLES),
        ),
    }


def chart(run: Run) -> dict:
    progress = run.progress or {}
    budget = (run.config or {}).get("budget") or {}
    title = _("Best score over metric calls")
    return {
        "title": title,
        "svg": charts.progress_svg(
            progress.get("points") or [],
            now_calls=int(progress.get("metric_calls") or 0),
            max_calls=int(progress.get("max_metric_calls") or budget.get("metric_calls") or 0),
            title=title,
        ),
    }


# -- what it found ---------------------------------------------------------------------


def _score_on(candidate: RunCandidate | None, key: str) -> float | None:
    if candidate is None:
        return None
    value = (candidate.val_scores or {}).get(str(key))
    return float(value) if isinstance(value, int | float) else None


def frontier(run: Run, by_idx: Mapping[int, RunCandidate]) -> dict:
    """The Pareto frontier: for each validation case, the candidates best on it (with
    their score on it), and how many cases each of those leads on."""
    front = (run.progress or {}).get("front") or {}
    keys = _case_keys(front)
    rows = []
    leads: dict[int, int] = {}
    for key in keys:
        members = sorted(int(i) for i in front.get(key) or () if str(i).lstrip("-").isdigit())
        for idx in members:
            leads[idx] = leads.get(idx, 0) + 1
        if len(rows) < CASE_ROWS:
            rows.append(
                {
                    "label": case_label(key),
                    "members": [
                        {"idx": idx, "score": number(_score_on(by_idx.get(idx), key))}
                        for idx in members
                    ],
                }
            )
    summary = [
        {
            "idx": idx,
            "text": ngettext(
                "Candidate %(candidate)s: best on %(count)s case",
                "Candidate %(candidate)s: best on %(count)s cases",
                cases,
            )
            % {"candidate": idx, "count": format_count(cases)},
        }
        for idx, cases in sorted(leads.items(), key=lambda item: (-item[1], item[0]))
    ]
    hidden = max(0, len(keys) - CASE_ROWS)
    return {
        "key": _fingerprint("front", front, [(c.idx, c.val_scores) for c in by_idx.values()]),
        "rows": rows,
        "summary": summary,
        "total": len(keys),
        "hidden": hidden,
        "hidden_text": ngettext(
            "%(cases)s more case is not shown.", "%(cases)s more cases are not shown.", hidden
        )
        % {"cases": format_count(hidden)},
    }


def problems_text(problems: Mapping | None) -> str:
    """A candidate's failed cases by problem: "3 cases failed: run_error"."""
    parts = []
    for code, cases in sorted((problems or {}).items()):
        if not isinstance(cases, int) or cases <= 0:
            continue
        parts.append(
            ngettext("%(count)s case failed: %(code)s", "%(count)s cases failed: %(code)s", cases)
            % {"count": format_count(cases), "code": code}
        )
    return "; ".join(parts)


def tree(candidates: list[RunCandidate], best_idx: int | None) -> list[dict]:
    """The candidates as a tree, each under its first parent (a merge names its other
    parents), flattened for the template into the tags to write: {"tag": "ul"}, a node
    ({"tag": "li", ...}, whose <li> stays open for its children), {"tag": "/li"} and
    {"tag": "/ul"}. Written without recursion, so a long line of descent costs no stack."""
    known = {c.idx for c in candidates}
    children: dict[int | None, list[RunCandidate]] = {}
    for candidate in candidates:
        parents = [p for p in candidate.parents or () if p in known and p != candidate.idx]
        parent = parents[0] if parents and candidate.idx != 0 else None
        children.setdefault(parent, []).append(candidate)
    out: list[dict] = [{"tag": "ul"}]
    stack: list[tuple[str, object]] = [("node", c) for c in reversed(children.get(None, []))]
    seen: set[int] = set()
    while stack:
        what, item = stack.pop()
        if what != "node":
            out.append({"tag": what})
            continue
        candidate = item
        if candidate.idx in seen:  # a cycle in bad data: each candidate once
            continue
        seen.add(candidate.idx)
        others = [p for p in candidate.parents or () if p in known][1:]
        out.append(
            {
                "tag": "li",
                "idx": candidate.idx,
                "seed": candidate.idx == 0,
                "best": candidate.idx == best_idx,
                "score": number(candidate.average),
                "found_text": ngettext(
                    "found after %(calls)s metric call",
                    "found after %(calls)s metric calls",
                    candidate.discovered_at,
                )
                % {"calls": format_count(candidate.discovered_at)},
                "problems": problems_text(candidate.problems),
                "merged_text": (
                    _("also from candidate %(others)s")
                    % {"others": ", ".join(str(p) for p in others)}
                    if others
                    else ""
                ),
            }
        )
        kids = children.get(candidate.idx, [])
        stack.append(("/li", None))
        if kids:
            stack.append(("/ul", None))
            stack.extend(("node", kid) for kid in reversed(kids))
            stack.append(("ul", None))
    out.append({"tag": "/ul"})
    # Candidates that hang from nothing known (their parent never arrived) still show.
    for candidate in candidates:
        if candidate.idx not in seen:
            out[-1:-1] = [
                {
                    "tag": "li",
                    "idx": candidate.idx,
                    "seed": False,
                    "best": candidate.idx == best_idx,
                    "score": number(candidate.average),
                    "found_text": "",
                    "problems": problems_text(candidate.problems),
                    "merged_text": "",
                },
                {"tag": "/li"},
            ]
    return out


def _diff_text(diff) -> str:
    """What the diff changed, in a sentence or two; a side with no word changed is not
    said."""
    if diff.same:
        return _("The text is the same as the starting candidate's.")
    parts = []
    if diff.removed:
        parts.append(
            ngettext(
                "%(count)s word of the starting candidate was removed.",
                "%(count)s words of the starting candidate were removed.",
                diff.removed,
            )
            % {"count": format_count(diff.removed)}
        )
    if diff.added:
        parts.append(
            ngettext("%(count)s word was added.", "%(count)s words were added.", diff.added)
            % {"count": format_count(diff.added)}
        )
    return " ".join(parts)


def best_block(run: Run, by_idx: Mapping[int, RunCandidate]) -> dict | None:
    """The best candidate so far (the result's once the run ended): its text, its score
    and what it changed in the seed; None before the seed was scored."""
    result = run.result or {}
    seed = by_idx.get(0)
    found = (result.get("best") or {}) if result else {}
    if found.get("text") is not None:
        idx = found.get("candidate", 0)
        text, score = found["text"], found.get("val_mean")
        seed_text = (result.get("seed") or {}).get("text", seed.text if seed else "")
        seed_score = (result.get("seed") or {}).get("val_mean")
    else:
        best = best_of(list(by_idx.values()))
        if best is None:
            return None
        idx, text, score = best.idx, best.text, best.average
        seed_text = seed.text if seed else ""
        seed_score = seed.average if seed else None
    diff = inline_diff(seed_text, text) if idx != 0 else None
    return {
        "key": _fingerprint("best", idx, text, score, seed_text),
        "idx": idx,
        "is_seed": idx == 0,
        "text": text,
        "score": number(score),
        "seed_score": number(seed_score),
        "gain": number(score - seed_score) if score is not None and seed_score is not None else "—",
        "diff": diff,
        "diff_text": _diff_text(diff) if diff else "",
    }


def case_table(run: Run, by_idx: Mapping[int, RunCandidate], best_idx: int | None) -> dict:
    """Each validation case's score with the starting candidate and with the best one."""
    result = run.result or {}
    if result.get("best") and result.get("seed"):
        seed_scores = result["seed"].get("val_scores") or {}
        best_scores = result["best"].get("val_scores") or {}
    else:
        seed_scores = by_idx[0].val_scores if 0 in by_idx else {}
        best = by_idx.get(best_idx) if best_idx is not None else None
        best_scores = best.val_scores if best else {}
    keys = _case_keys(seed_scores, best_scores)
    rows = []
    tally = {"better": 0, "worse": 0, "same": 0}
    for key in keys:
        before, after = seed_scores.get(key), best_scores.get(key)
        change = ""
        if isinstance(before, int | float) and isinstance(after, int | float):
            change = "better" if after > before else "worse" if after < before else "same"
            tally[change] += 1
        if len(rows) < CASE_ROWS:
            rows.append(
                {
                    "label": case_label(key),
                    "seed": number(before) if before is not None else "—",
                    "best": number(after) if after is not None else "—",
                    "change": change,
                }
            )
    hidden = max(0, len(keys) - CASE_ROWS)
    return {
        "key": _fingerprint("cases", seed_scores, best_scores),
        "rows": rows,
        "total": len(keys),
        "hidden": hidden,
        "hidden_text": ngettext(
            "%(cases)s more case is in the bundle's result.json.",
            "%(cases)s more cases are in the bundle's result.json.",
            hidden,
        )
        % {"cases": format_count(hidden)},
        "same_candidate": best_idx == 0,
        "tally_text": _("Better on %(better)s, worse on %(worse)s, unchanged on %(same)s.")
        % {key: format_count(value) for key, value in tally.items()},
    }


CHANGE_WORDS = {
    "better": gettext_lazy("better"),
    "worse": gettext_lazy("worse"),
    "same": gettext_lazy("unchanged"),
}


def run_page(run: Run, candidates: list[RunCandidate], events: list[RunEvent]) -> dict:
    """Everything the run page's live part shows."""
    by_idx = {c.idx: c for c in candidates}
    best = best_block(run, by_idx)
    best_idx = best["idx"] if best else None
    cases = case_table(run, by_idx, best_idx)
    for row in cases["rows"]:
        row["change_text"] = CHANGE_WORDS.get(row["change"], "")
    return {
        "token": selectors.live_token(run),
        "standing": standing(run),
        "spend": spending(run),
        "chart": chart(run),
        "frontier": frontier(run, by_idx),
        "tree": tree(candidates, best_idx) if candidates else [],
        "tree_key": _fingerprint(
            "tree", best_idx, [(c.idx, c.parents, c.average, c.problems) for c in candidates]
        ),
        "best": best,
        "cases": cases,
        "log": eventlog.log_rows(events, limit=selectors.LOG_EVENTS),
    }


def budget_usd(config: Mapping) -> str:
    """The run's dollar budget across its models; "" for a run submitted without one."""
    value = ((config or {}).get("budget") or {}).get("usd")
    return usd(float(value)) if value else ""


def list_row(run: Run) -> dict:
    """A run as a row of the runs list: where it stands and its best score so far."""
    progress = run.progress or {}
    budget = (run.config or {}).get("budget") or {}
    best = progress.get("best") or {}
    max_calls = progress.get("max_metric_calls") or budget.get("metric_calls") or 0
    return {
        "run": run,
        "best": number(best.get("score")) if progress.get("candidates") else "—",
        "seed": number(progress.get("seed_score")) if progress.get("candidates") else "",
        "calls": _("%(calls)s of %(budget)s")
        % {
            "calls": format_count(progress.get("metric_calls") or 0),
            "budget": format_count(max_calls),
        },
    }
