"""python manage.py convert_metric SOURCE.py [--language en|es|hi] [--json]

Rewrites a metric written for DSPy GEPA or for gepa into the contract (contract.convert)
and prints the converted metric.py on stdout. Exit status 0 when everything was
converted (or the file already keeps the contract); 2 when something was left to do by
hand (the converted text is still printed, and each note goes to stderr as
`SOURCE.py:LINE: words`), when no metric was recognised, and when the file cannot be
read, is not UTF-8 or has a syntax error.

--json prints one object instead: {"source", "framework", "changed", "notes": [{"code",
"line", "params", "message"}]}.
"""

from __future__ import annotations

import json
import sys

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.translation import override

from checks.management.files import UsageError, read_file
from contract.convert import Conversion, ConvertError, Note, convert
from wording.convert import convert_error_words, note_words

LANGUAGES = [code for code, _name in settings.LANGUAGES]


class Command(BaseCommand):
    help = "Rewrite a DSPy GEPA or gepa metric into the contract's score(input, output, expected)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", metavar="SOURCE.py")
        parser.add_argument("--language", choices=LANGUAGES, default="en")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON object"
        )

    def handle(self, *args, source: str, language: str, as_json: bool, **options) -> None:
        with override(language):
            text = self._read(source)
            try:
                conversion = convert(text)
            except ConvertError as exc:
                raise UsageError(f"{source}: {convert_error_words(exc.code, exc.params)}") from None
            if as_json:
                report = json.dumps(public_report(conversion), ensure_ascii=False, indent=2)
                self.stdout.write(report)
            else:
                self.stdout.write(conversion.source, ending="")
            for note in conversion.notes:
                self.stderr.write(note_line(source, note))
        if conversion.notes:
            sys.exit(2)

    def _read(self, path: str) -> str:
        data = read_file(path)
        try:
            # utf-8-sig: a file an editor saved with a byte order mark is UTF-8 all the same.
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            before = data[: exc.start]
            line_start = before.rfind(b"\n") + 1
            column = len(before[line_start:].decode("utf-8", "replace")) + 1
            params = {"path": path, "line": before.count(b"\n") + 1, "column": column}
            raise UsageError(convert_error_words("not_utf8", params)) from None


def note_line(path: str, note: Note) -> str:
    """A note as compilers and linters write one: path:line: words."""
    where = f"{path}:{note.line}" if note.line else path
    return f"{where}: {note_words(note.code, note.params)}"


def public_report(conversion: Conversion) -> dict:
    """The command's documented JSON shape."""
    return {
        "source": conversion.source,
        "framework": conversion.framework,
        "changed": conversion.changed,
        "notes": [
            {**note.to_dict(), "message": note_words(note.code, note.params)}
            for note in conversion.notes
        ],
    }
