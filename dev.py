#!/usr/bin/env python3
"""Set up and run the workbench on a fresh machine that has Python 3.11+.

    python3 dev.py run    # virtualenv, install, migrate, then site + worker + Redis
    python3 dev.py test   # virtualenv, install, then ruff and the whole test suite

Only the standard library is used here: this runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"


def python_ok() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before the venv exists
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}.")


def ensure_venv(requirements: str) -> Path:
    """Create .venv and install the pinned requirements, again only when they change."""
    if not (BIN / "python").exists():
        print("Creating the virtualenv in .venv ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    files = [ROOT / "requirements.txt", ROOT / requirements]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    stamp = VENV / f".installed-{Path(requirements).stem}"
    if not stamp.exists() or stamp.read_text() != digest:
        print(f"Installing {requirements} ...", flush=True)
        pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check"]
        # From the checkout: requirements.txt installs the runtime by its path (./runtime).
        subprocess.run(
            [*pip, "install", "--quiet", "-r", str(ROOT / requirements)], check=True, cwd=ROOT
        )
        stamp.write_text(digest)
    return BIN / "python"


def run(args: list[str]) -> int:
    python = ensure_venv("requirements.txt")
    os.chdir(ROOT)
    os.execv(str(python), [str(python), "manage.py", "serve", *args])


def test(args: list[str]) -> int:
    python = ensure_venv("requirements-dev.txt")
    os.chdir(ROOT)
    steps = [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        # The import contracts of pyproject.toml ([tool.importlinter]).
        [str(BIN / "lint-imports"), "--no-cache"],
        [str(python), "-m", "pytest", *args],
    ]
    for step in steps:
        print(
            "$",
            " ".join(Path(step[0]).name if i == 0 else a for i, a in enumerate(step)),
            flush=True,
        )
        env = os.environ
        if Path(step[0]).name == "lint-imports":  # it imports nothing, but must find ours
            env = {**env, "PYTHONPATH": str(ROOT)}
        code = subprocess.run(step, env=env).returncode
        if code == 5:
            print("No tests were collected: that is a failure, not a pass.", file=sys.stderr)
            return 1
        if code != 0:
            return code
    return 0


def main() -> int:
    python_ok()
    commands = {"run": run, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
