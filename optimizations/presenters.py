"""What the run page shows of a run, worked out from its row and its candidates."""

from __future__ import annotations

from optimizations.models import RunCandidate
from submissions.models import Run


def run_page(run: Run) -> dict:
    candidates = list(RunCandidate.objects.filter(run=run))
    return {"candidates": candidates, "progress": run.progress or {}, "result": run.result}
