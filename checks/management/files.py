"""What the commands share: reading the file a user named, and the error that exits 2."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _


def UsageError(message: str) -> CommandError:
    """A usage error: the command prints it and exits with status 2."""
    return CommandError(message, returncode=2)


def read_file(path: str, limit: int | None = None) -> bytes:
    """The bytes of `path`, or a UsageError saying in the reader's language why not."""
    file = Path(path)
    try:
        if limit is not None and file.stat().st_size > limit:
            raise UsageError(
                _("%(path)s is larger than %(limit)s bytes.") % {"path": path, "limit": limit}
            )
        return file.read_bytes()
    except FileNotFoundError:
        raise UsageError(_("%(path)s does not exist.") % {"path": path}) from None
    except IsADirectoryError:
        raise UsageError(_("%(path)s is a folder, not a file.") % {"path": path}) from None
    except PermissionError:
        raise UsageError(_("%(path)s cannot be read.") % {"path": path}) from None
