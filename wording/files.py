"""Words for a metric's helper files (contract.files): the limits a set of files is held
to, and what an upload (a folder, a .zip) added, left out or refused."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from wording.formatting import fill, table_words

# contract.files.PROBLEMS, and an upload's own refusals (metrics.uploads).
FILE_PROBLEMS = {
    "too_many_files": _("%(count)s helper files: a metric may carry at most %(max)s."),
    "files_too_large": _(
        "metric.py and its files come to %(size)s bytes; the limit is %(limit)s bytes."
    ),
    "file_path_empty": _("A file has no path: give it one, such as src/scoring.py."),
    "file_path_too_long": _("%(path)s is too long for a path: at most %(max)s characters long."),
    "file_path_absolute": _(
        "%(path)s is an absolute path: give its path from metric.py's folder, such as "
        "src/scoring.py."
    ),
    "file_path_parent": _("%(path)s leaves metric.py's folder (..): give a path inside it."),
    "file_path_not_python": _("%(path)s is not a Python file: only .py files can be added."),
    "file_path_not_identifier": _(
        "%(path)s cannot be imported: %(part)s is not a Python name (letters, digits and _, "
        "not starting with a digit)."
    ),
    "file_path_is_metric": _("metric.py is the metric itself: edit it in its own tab."),
    "file_path_duplicate": _("%(path)s is there twice."),
    "file_module_clash": _("%(path)s and %(other)s would both be the same module."),
    "file_not_text": _("%(path)s is not text."),
    "file_not_utf8": _("%(path)s is not UTF-8 text. Save it as UTF-8."),
    "file_too_large": _("%(path)s is %(size)s bytes; a file may be at most %(limit)s bytes."),
    "file_syntax_error": _("Syntax error in %(path)s at line %(line)s, column %(column)s: %(msg)s"),
    "upload_not_zip": _("The upload is not a .zip file."),
    "upload_too_large": _("The upload is %(size)s bytes; the limit is %(limit)s bytes."),
    "upload_too_many_entries": _(
        "The upload holds %(count)s entries; at most %(max)s are read. Upload the helper "
        "modules' folder alone."
    ),
    "upload_empty": _("The upload holds no .py file."),
}

# What an upload added, and the files it left out (not Python, or metric.py itself).
UPLOAD_ADDED = ngettext_lazy(
    "Added %(count)s file: %(paths)s.", "Added %(count)s files: %(paths)s.", "count"
)
UPLOAD_IGNORED = ngettext_lazy(
    "Left out %(count)s file that is not a Python module: %(paths)s.",
    "Left out %(count)s files that are not Python modules: %(paths)s.",
    "count",
)
UPLOAD_METRIC_KEPT = _(
    "The upload's metric.py was left out: paste it into the metric.py tab if you want it."
)


def file_problem_words(code: str | None, params: Mapping) -> str:
    return table_words(FILE_PROBLEMS, code, params)


def upload_words(added: list[str], ignored: list[str], metric: bool) -> str:
    """What an upload did, in sentences."""
    said = []
    if added:
        said.append(fill(UPLOAD_ADDED, {"count": len(added), "paths": ", ".join(added)}))
    if ignored:
        shown = ", ".join(ignored[:10]) + (", …" if len(ignored) > 10 else "")
        said.append(fill(UPLOAD_IGNORED, {"count": len(ignored), "paths": shown}))
    if metric:
        said.append(str(UPLOAD_METRIC_KEPT))
    return " ".join(said)
