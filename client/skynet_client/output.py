"""What a command prints: rich text on a terminal (a spinner or a progress bar while it
waits), plain lines when piped, or one JSON document with --json."""

from __future__ import annotations

import contextlib
import json
import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class Output:
    def __init__(self, *, as_json: bool, quiet: bool = False) -> None:
        self.as_json = as_json
        self.quiet = quiet
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    @property
    def interactive(self) -> bool:
        return not self.as_json and not self.quiet and self.err.is_terminal

    def line(self, text: str = "", *, style: str | None = None) -> None:
        if not self.as_json and not self.quiet:
            self.out.print(text, style=style, markup=False)

    def failure(self, text: str) -> None:
        """A failure's one line: printed even with -q, so a CI log keeps the reason."""
        if not self.as_json:
            self.out.print(text, style="bold red", markup=False)

    def note(self, text: str) -> None:
        """What happened on the way (on stderr), apart from the result (on stdout)."""
        if not self.as_json and not self.quiet:
            self.err.print(text, style="dim", markup=False)

    def document(self, value: object) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")

    def error(self, message: str) -> None:
        self.err.print(message, style="bold red", markup=False)

    @contextlib.contextmanager
    def progress(self, description: str, *, total: int | None = None):
        """A bar (or a spinner with no total) on a terminal; nothing otherwise. Yields a
        function update(done, total=None, description=None)."""
        if not self.interactive:
            yield lambda *args, **kwargs: None
            return
        columns = [SpinnerColumn(), TextColumn("{task.description}")]
        if total is not None:
            columns += [BarColumn(), TextColumn("{task.completed}/{task.total}")]
        columns.append(TimeElapsedColumn())
        with Progress(*columns, console=self.err, transient=True) as bar:
            task = bar.add_task(description, total=total)

            def update(done=None, total=None, description=None) -> None:
                changes = {}
                if done is not None:
                    changes["completed"] = done
                if total is not None:
                    changes["total"] = total
                if description is not None:
                    changes["description"] = description
                bar.update(task, **changes)

            yield update
