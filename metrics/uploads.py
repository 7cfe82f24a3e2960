"""A folder or a .zip of a repository's helper modules, made into helper files.

The playground's "Upload a folder" sends each file of the folder with its path in it
(the browser's webkitRelativePath); "Upload a .zip" sends the archive, read here with
zipfile. Either way only `.py` files are kept: `__pycache__` and hidden folders are
skipped, any other file is left out and named, and a metric.py is left out (the metric
is the editor's own tab). A top folder no module can be named after ("my-repo-main/",
as GitHub's "Download ZIP" makes), or one holding metric.py (the repository's own folder),
is dropped from every path; any other is kept, as a package (an uploaded "src/"). What is kept is held to
contract.files' limits; nothing past them is read whole (a member's declared size is
checked first, and no more than the limit is ever read of it).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

from contract import files as helper_files

# The upload itself (a folder's files together, or the .zip): a few times the files'
# own limit, for what is left out.
MAX_UPLOAD_BYTES = 4 * helper_files.MAX_TOTAL_BYTES
# Entries of a .zip looked at, at most (a repository's node_modules is not a metric's).
MAX_ENTRIES = 5000


@dataclass
class Upload:
    files: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    metric: bool = False
    problems: list[helper_files.Problem] = field(default_factory=list)


def _strip_top(paths: list[str]) -> list[str]:
    """Drop a top folder every path shares when it is metric.py's own folder (it holds a
    metric.py), or when it cannot be a module's name."""
    tops = {path.split("/", 1)[0] for path in paths if "/" in path}
    if len(tops) != 1 or any("/" not in path for path in paths):
        return paths
    top = tops.pop()
    if top.isidentifier() and f"{top}/{helper_files.METRIC}" not in paths:
        return paths
    return [path.split("/", 1)[1] for path in paths]


def _skipped(path: str) -> bool:
    parts = path.split("/")
    return any(part == "__pycache__" or part.startswith(".") for part in parts[:-1]) or (
        parts[-1].endswith((".pyc", ".pyo"))
    )


def collect(entries: list[tuple[str, int, object]]) -> Upload:
    """The helper files of (path, declared size, read(limit) -> bytes) entries."""
    upload = Upload()
    entries = [(p.replace("\\", "/").lstrip("/"), size, read) for p, size, read in entries]
    entries = [e for e in entries if e[0] and not e[0].endswith("/")]
    paths = _strip_top([path for path, _size, _read in entries])
    wanted: list[tuple[str, int, object]] = []
    for path, (_old, size, read) in zip(paths, entries, strict=True):
        if _skipped(path):
            continue
        if path == helper_files.METRIC:
            upload.metric = True
        elif not path.endswith(".py"):
            upload.ignored.append(path)
        else:
            wanted.append((path, size, read))
    if not wanted:
        upload.problems.append(helper_files.Problem("upload_empty"))
        return upload
    if len(wanted) > helper_files.MAX_FILES:
        upload.problems.append(
            helper_files.Problem(
                "too_many_files", {"count": len(wanted), "max": helper_files.MAX_FILES}
            )
        )
        return upload
    pairs: list[tuple[str, object]] = []
    for path, size, read in wanted:
        if size > helper_files.MAX_FILE_BYTES:
            upload.problems.append(
                helper_files.Problem(
                    "file_too_large",
                    {"path": path, "size": size, "limit": helper_files.MAX_FILE_BYTES},
                )
            )
            continue
        pairs.append((path, read(helper_files.MAX_FILE_BYTES + 1)))  # type: ignore[operator]
    kept, problems = helper_files.validate(pairs)
    upload.files = kept
    upload.problems += problems
    return upload


def from_zip(data: bytes) -> Upload:
    """The helper files of a .zip's bytes."""
    if len(data) > MAX_UPLOAD_BYTES:
        return Upload(
            problems=[
                helper_files.Problem(
                    "upload_too_large", {"size": len(data), "limit": MAX_UPLOAD_BYTES}
                )
            ]
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        return Upload(problems=[helper_files.Problem("upload_not_zip")])
    if len(infos) > MAX_ENTRIES:
        return Upload(
            problems=[
                helper_files.Problem(
                    "upload_too_many_entries", {"count": len(infos), "max": MAX_ENTRIES}
                )
            ]
        )

    def reader(info: zipfile.ZipInfo):
        def read(limit: int) -> bytes:
            try:
                with archive.open(info) as member:
                    return member.read(limit)
            except (zipfile.BadZipFile, NotImplementedError, OSError, RuntimeError, EOFError):
                return b"\xff"  # said as not UTF-8 text

        return read

    entries = [(info.filename, info.file_size, reader(info)) for info in infos if not info.is_dir()]
    return collect(entries)


def from_files(files: list[tuple[str, bytes]], others: list[str] = ()) -> Upload:
    """The helper files of a folder's files, each (its path in the folder, its bytes);
    `others`: the paths of the folder's other files, which the browser did not send."""
    total = sum(len(data) for _path, data in files)
    if total > MAX_UPLOAD_BYTES:
        return Upload(
            problems=[
                helper_files.Problem("upload_too_large", {"size": total, "limit": MAX_UPLOAD_BYTES})
            ]
        )
    entries = [(path, len(data), lambda limit, data=data: data[:limit]) for path, data in files]
    entries += [(path, 0, lambda limit: b"") for path in others if not path.endswith(".py")]
    return collect(entries)
