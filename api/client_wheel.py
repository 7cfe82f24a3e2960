"""The `skynet` command line as a wheel this workbench serves at /client/<file>.whl, so a
CI job installs the client of the very workbench it talks to:
`pip install https://<workbench>/client/skynet_client-1.1.0-py3-none-any.whl`.

The wheel is built from client/ by flit_core, the client's own build backend, the first
time it is asked for after the client's files change (about 70 ms), into var/client/ under
a name that carries their digest, so an upgraded workbench never serves a stale one and
two requests building at once each end with the same whole file (flit_core writes a
temporary file and renames it)."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from flit_core.wheel import make_wheel_in

CLIENT_DIR = settings.BASE_DIR / "client"
PACKAGE = CLIENT_DIR / "skynet_client"
_lock = threading.Lock()


@dataclass(frozen=True)
class Wheel:
    path: Path
    version: str

    @property
    def name(self) -> str:
        return self.path.name


def _sources() -> list[Path]:
    """What the wheel is made of: the project file, the modules and the catalogues."""
    kept = (".py", ".po", ".mo")
    files = [p for p in PACKAGE.rglob("*") if p.suffix in kept and "__pycache__" not in p.parts]
    return [CLIENT_DIR / "pyproject.toml", *sorted(files)]


def _digest() -> str:
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(str(path.relative_to(CLIENT_DIR)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def version() -> str:
    """The client's version, as its package says it (flit_core reads the same line)."""
    for line in (PACKAGE / "__init__.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise RuntimeError("skynet_client has no __version__")


def current() -> Wheel:
    """The wheel of the client as its files are now, built if it is not yet."""
    folder = Path(settings.VAR_DIR) / "client" / _digest()
    found = sorted(folder.glob("skynet_client-*.whl")) if folder.is_dir() else []
    if not found:
        with _lock:
            folder.mkdir(parents=True, exist_ok=True)
            found = sorted(folder.glob("skynet_client-*.whl"))
            if not found:
                found = [Path(make_wheel_in(CLIENT_DIR / "pyproject.toml", folder).file)]
    return Wheel(found[0], version())
