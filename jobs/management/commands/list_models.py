"""python manage.py list_models [--json]

Lists the model catalogue (the SKYNET_MODEL_CATALOGUE file): each model's id, provider,
display name, list prices, context window, and whether it is configured on this machine
(its key variable is set), with how to configure it when it is not. Exit status 0, or 2
when the catalogue cannot be used.
"""

from __future__ import annotations

import json
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from providers.catalogue import CatalogueError, load_catalogue
from wording import format_number


class Command(BaseCommand):
    help = "List the models a metric or the reflection model can use."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON object"
        )

    def handle(self, *args, as_json: bool, **options) -> None:
        path = settings.MODEL_CATALOGUE
        try:
            catalogue = load_catalogue(path, os.environ)
        except CatalogueError as exc:
            raise CommandError(str(exc), returncode=2) from None
        listing = catalogue.listing()
        if as_json:
            report = {"catalogue": str(path), "models": listing}
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            self.stdout.write(text_listing(listing))


def text_listing(models: list[dict]) -> str:
    header = [
        _("ID"),
        _("Provider"),
        _("Name"),
        _("USD / 1M input"),
        _("USD / 1M output"),
        _("Context"),
        _("Configured"),
    ]
    rows = [
        [
            m["id"],
            m["provider"],
            m["name"],
            format_number(m["input_usd_per_mtok"]),
            format_number(m["output_usd_per_mtok"]),
            str(m["context_window"]),
            _("yes") if m["configured"] else _("no"),
        ]
        for m in models
    ]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(header, widths, strict=True)).rstrip()]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    missing = sorted({m["api_key_env"] for m in models if not m["configured"]})
    if missing:
        lines.append("")
        for name in missing:
            ids = ", ".join(m["id"] for m in models if m["api_key_env"] == name)
            lines.append(
                _("To use %(models)s, set the environment variable %(variable)s.")
                % {"models": ids, "variable": name}
            )
    return "\n".join(lines)
