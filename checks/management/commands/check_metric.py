"""python manage.py check_metric METRIC_FILE [--cases CASES.jsonl] [--timeout SECONDS]
[--language en|es|hi] [--json] [--metric-model ID] [--reflection-model ID]

Runs the contract check directly through the child-process runner: no broker, web
server or database. Exit status 0 when the check passed, 1 when it failed, 2 on a
usage error (an unknown or not configured model among them).

skynet.llm() in the metric is answered by the metric model, or by the reflection model
when no metric model is given (the docs' rule), within the per-check budget
(SKYNET_CHECK_MAX_MODEL_CALLS, _TOKENS, _USD); with neither it fails with
"no_metric_model". `python manage.py list_models` lists the ids.
"""

from __future__ import annotations

import json
import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.translation import gettext as _
from django.utils.translation import override

from checks.management.files import UsageError, read_file
from contract.cases import CasesError, parse_cases_jsonl
from contract.engine import run_check, validate_timeout
from jobs import model_choices, sandbox_pool
from providers.catalogue import CatalogueError, ModelChoiceError, load_catalogue
from providers.gateway import ModelGateway, gateway_for_check
from wording import format_number, render, words

LANGUAGES = [code for code, _name in settings.LANGUAGES]
MAX_CASES_FILE = 1024 * 1024


class Command(BaseCommand):
    help = "Run the contract check on a metric.py file."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("metric_file", metavar="METRIC_FILE")
        parser.add_argument(
            "--cases", metavar="CASES.jsonl", help="three cases, one JSON object a line"
        )
        parser.add_argument(
            "--timeout",
            metavar="SECONDS",
            default=None,
            help="time limit of one score call (1-600, default 60)",
        )
        parser.add_argument("--language", choices=LANGUAGES, default="en")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON object"
        )
        parser.add_argument(
            "--metric-model",
            metavar="ID",
            default=None,
            help="the model that answers skynet.llm() (ids: python manage.py list_models)",
        )
        parser.add_argument(
            "--reflection-model",
            metavar="ID",
            default=None,
            help="the reflection model; answers skynet.llm() when no --metric-model is given",
        )

    def handle(
        self,
        *args,
        metric_file: str,
        cases: str | None,
        timeout: str | None,
        language: str,
        as_json: bool,
        metric_model: str | None = None,
        reflection_model: str | None = None,
        **options,
    ) -> None:
        with override(language):
            source = self._read(metric_file, limit=None)
            case_list = self._cases(cases) if cases else None
            timeout_s = self._timeout(timeout)
            gateway = self._gateway(metric_model, reflection_model)
            try:
                result = run_check(
                    source,
                    case_list,
                    timeout_s=timeout_s,
                    sandbox_config=sandbox_pool.base_config(),
                    llm_for_case=gateway.for_case if gateway is not None else None,
                )
            finally:
                if gateway is not None:
                    gateway.close()
            rendered = render(result.to_dict())
            if as_json:
                self.stdout.write(json.dumps(public_report(rendered), ensure_ascii=False, indent=2))
            else:
                self.stdout.write(text_report(rendered))
        if not result.passed:
            sys.exit(1)

    def _read(self, path: str, limit: int | None) -> bytes:
        return read_file(path, limit)

    def _cases(self, path: str):
        data = self._read(path, limit=MAX_CASES_FILE)
        try:
            return parse_cases_jsonl(data)
        except CasesError as exc:
            message = words(exc.code, {"line": exc.line, **(exc.params or {})}, family="cases")
            raise UsageError(f"{path}: {message}") from None

    def _gateway(self, metric_model: str | None, reflection_model: str | None):
        """The metric model's gateway, or None when no model is chosen."""
        if not metric_model and not reflection_model:
            return None
        try:
            catalogue = load_catalogue(settings.MODEL_CATALOGUE, os.environ)
        except CatalogueError as exc:
            raise UsageError(str(exc)) from None
        try:
            gateway: ModelGateway | None = gateway_for_check(
                catalogue,
                metric_model=metric_model,
                reflection_model=reflection_model,
                limits=model_choices.limits(),
                timeout_s=settings.MODEL_TIMEOUT_S,
            )
        except ModelChoiceError as exc:
            listing = _("See the models and how to configure them: python manage.py list_models")
            if exc.code == "not_configured":
                message = _(
                    "The model %(model)s is not configured: set the environment variable %(variable)s."
                ) % {"model": exc.model_id, "variable": exc.key_env}
            else:
                message = _("Unknown model %(model)s.") % {"model": exc.model_id}
            raise UsageError(f"{message} {listing}") from None
        return gateway

    def _timeout(self, raw: str | None) -> float:
        if raw is None:
            return float(settings.CHECK_TIMEOUT_DEFAULT)
        try:
            return validate_timeout(float(raw))
        except ValueError:
            raise UsageError(
                _("--timeout must be a number of seconds from 1 to 600; got %(value)s.")
                % {"value": raw}
            ) from None


def public_report(rendered: dict) -> dict:
    """The command's documented JSON shape."""
    return {
        "passed": bool(rendered["passed"]),
        "failed_stage": rendered["failed_stage"],
        "sandbox_mode": rendered.get("sandbox_mode"),
        "layers": list(rendered.get("layers") or []),
        # What a failed metric.py looks like, and whether Convert would change it.
        "looks_like": rendered.get("looks_like"),
        "looks_like_message": rendered.get("looks_like_message") or "",
        "stages": [
            {
                "id": s["id"],
                "status": s["status"],
                "message": " ".join(filter(None, [s["message"], *s["details"]])),
            }
            for s in rendered["stages"]
        ],
        "cases": [
            {
                "index": c["index"],
                "status": c["status"],
                "score": c["score"],
                "feedback": c["feedback"],
                "scores": c["scores"],
                "problem": c["problem"],
                "message": c["message"],
                # What came back when it broke the contract, and the return that keeps it.
                "shape": c.get("shape"),
                "fix": c.get("fix"),
                "duration_ms": c["duration_ms"],
            }
            for c in rendered["cases"]
        ],
        "hints": [
            {"code": h["code"], "case": h["case"], "message": h["message"]}
            for h in rendered["hints"]
        ],
    }


def text_report(rendered: dict) -> str:
    """The same content as the JSON, for a terminal."""
    marks = {"passed": "✓", "failed": "✗", "skipped": "–", "pending": "·", "running": "…"}
    lines = []
    if rendered["passed"]:
        lines.append(_("Contract check passed."))
    else:
        failed = next(
            (s["name"] for s in rendered["stages"] if s["id"] == rendered["failed_stage"]), "?"
        )
        lines.append(_("Contract check failed at %(stage)s.") % {"stage": failed})
    lines.append("")
    for stage in rendered["stages"]:
        line = f"  {marks.get(stage['status'], ' ')} {stage['name']}: {stage['status_label']}"
        if stage["message"]:
            line += f" — {stage['message']}"
        lines.append(line)
        lines.extend(f"      • {detail}" for detail in stage["details"])
    if rendered.get("looks_like_message"):
        lines.append("")
        lines.append(f"  {rendered['looks_like_message']}")
    lines.append("")
    lines.append(_("Cases"))
    for case in rendered["cases"]:
        head = _("Case %(number)s: %(status)s") % {
            "number": case["number"],
            "status": case["status_label"],
        }
        parts = [head]
        if case["score"] is not None:
            parts.append(_("score %(score)s") % {"score": format_number(case["score"])})
        if case["duration_ms"] is not None:
            parts.append(_("%(ms)s ms") % {"ms": format_number(round(case["duration_ms"], 1))})
        lines.append("  " + ", ".join(parts))
        if case.get("usage"):
            lines.append("      " + usage_line(case["usage"]))
        if case["message"]:
            lines.append(f"      {case['message']}")
        if case.get("fix"):
            lines.append("      " + _("Return this instead: %(line)s") % {"line": case["fix"]})
        if case.get("docs_row_text"):
            value, verdict, _valid = case["docs_row_text"]
            lines.append(
                "      "
                + _("In the docs' table: %(value)s — %(verdict)s")
                % {"value": value, "verdict": verdict}
            )
        for frame in case.get("traceback") or []:
            lines.append(f"      metric.py:{frame['line']} {frame['function']}: {frame['text']}")
        if case["scores"]:
            named = ", ".join(f"{k}={format_number(v)}" for k, v in case["scores"].items())
            lines.append("      " + _("named scores: %(scores)s") % {"scores": named})
        if case["feedback"] is not None:
            lines.append(
                "      " + _("feedback: %(feedback)s") % {"feedback": case["feedback"][:500]}
            )
    lines.append("")
    layers = ", ".join(rendered["layer_names"]) or _("none")
    lines.append(_("Sandbox layers: %(layers)s") % {"layers": layers})
    if rendered.get("sandbox_note"):
        lines.append(rendered["sandbox_note"])
    if rendered["hints"]:
        lines.append("")
        lines.append(_("Feedback hints"))
        for hint in rendered["hints"]:
            where = (
                (_("case %(number)s") % {"number": hint["case"] + 1})
                if hint["case"] is not None
                else _("all cases")
            )
            lines.append(f"  • {where}: {hint['message']}")
    return "\n".join(lines)


def usage_line(usage: dict) -> str:
    """One case's model usage, for the readable report."""
    return _(
        "model calls: %(calls)s, tokens: %(input)s in / %(output)s out, cost: $%(cost)s, "
        "model time: %(ms)s ms"
    ) % {
        "calls": usage.get("model_calls", 0),
        "input": usage.get("input_tokens", 0),
        "output": usage.get("output_tokens", 0),
        "cost": f"{usage.get('cost_usd', 0.0):.6f}",
        "ms": format_number(round(usage.get("model_ms", 0.0), 1)),
    }
