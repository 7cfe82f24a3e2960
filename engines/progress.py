"""The run's progress as data: a gepa callback that turns its events and its state into
a snapshot of the run (iteration, metric calls, spend, the best candidate, the chart's
points, the Pareto frontier), the candidates it accepted (with their parents and scores
on each validation case) and a log of the events that matter. A `Sink` stores them; the
callback writes at most every `every_s` seconds (and at once on what must not wait: an
accepted candidate, a checkpoint, the end), so the database sees batches, not a write per
metric call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from engines.adapter import COMPONENT, SandboxAdapter, candidate_digest
from engines.calls import MetricCalls


class Sink(Protocol):
    def snapshot(self, progress: dict) -> None: ...
    def candidates(self, rows: list[dict]) -> None: ...
    def events(self, rows: list[dict]) -> None: ...
    def checkpoint(self, run_dir: str) -> None: ...


# Why gepa skipped reflecting on a parent (its EvaluationSkippedEvent's reason), as the
# run's events name it.
SKIP_CODES = {"all_scores_perfect": "perfect_minibatch", "no_trajectories": "no_traces"}
# The most of a minibatch's cases an event names (a run's minibatches have 1 to 50).
MINIBATCH_NAMED = 50


def _score(value: object) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _key(val_id: object) -> str:
    return str(val_id)


class Progress:
    """gepa's callbacks (duck-typed: gepa calls the methods a callback has)."""

    def __init__(
        self,
        sink: Sink,
        adapter: SandboxAdapter,
        *,
        spend: Callable[[], dict],
        max_metric_calls: int,
        every_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        text_of: Callable[[dict], str] | None = None,
        calls: MetricCalls | None = None,
    ) -> None:
        self.sink = sink
        # A candidate (gepa's {component: text}) as the one text the run page shows.
        self.text_of = text_of or (lambda candidate: candidate.get(COMPONENT, ""))
        self.adapter = adapter
        self.spend = spend
        self.max_metric_calls = max_metric_calls
        # The calls the budget counted: the run's earlier attempts' too, which a resumed
        # gepa's own count (its checkpoint's) can lack.
        self.calls = calls
        self.every_s = every_s
        self.clock = clock
        self.state = None
        self.iteration = 0
        self.metric_calls = 0
        self.known = 0  # candidates already handed to the sink
        self.pending: list[dict] = []
        self.last = 0.0
        self.seq = 0
        self.proposed = ""  # the digest of the latest proposal
        # This iteration's (parent, minibatch) pairs, in the order gepa sampled them: a
        # skipped evaluation names its parent only, and the log says which cases it had.
        self.sampled: list[tuple[int, list]] = []

    # -- what gepa tells ----------------------------------------------------------

    def on_iteration_start(self, event) -> None:
        self.state = event["state"]
        self.iteration = event["iteration"]
        self.sampled = []
        self._event("iteration", {})

    def on_iteration_end(self, event) -> None:
        self.state = event["state"]
        self.flush(force=event.get("proposal_accepted", False))

    def on_candidate_selected(self, event) -> None:
        self._event(
            "parent_selected", {"parent": event["candidate_idx"], "score": _score(event["score"])}
        )
        self.sampled.append((event["candidate_idx"], []))

    def on_minibatch_sampled(self, event) -> None:
        # gepa tells each parent's minibatch right after the parent.
        if self.sampled:
            parent, _ = self.sampled[-1]
            ids = [i for i in event["minibatch_ids"] if isinstance(i, int)][:MINIBATCH_NAMED]
            self.sampled[-1] = (parent, ids)

    def on_evaluation_skipped(self, event) -> None:
        """gepa proposes nothing from a parent whose minibatch leaves nothing to learn
        (every case at the perfect score, or no traces): no reflection call, no new
        candidate, only the minibatch's metric calls spent. Without this the log shows an
        iteration that picked a parent and then did nothing, and does not say why."""
        parent = event["candidate_idx"]
        cases: list = []
        for at, (idx, ids) in enumerate(self.sampled):
            if idx == parent:  # the first of its tasks not yet told of
                cases = ids
                del self.sampled[at]
                break
        reason = str(event.get("reason") or "")
        self._event(
            "reflection_skipped",
            {"code": SKIP_CODES.get(reason, reason[:40]), "candidate": parent, "cases": cases},
        )

    def on_proposal_end(self, event) -> None:
        texts = event.get("new_instructions") or {}
        text = self.text_of(texts) if texts else ""
        self.proposed = candidate_digest(text) if text else ""
        self._event("proposed", {"text": text[:4000], "digest": self.proposed})

    def on_candidate_accepted(self, event) -> None:
        self._event(
            "accepted",
            {
                "candidate": event["new_candidate_idx"],
                "score": _score(event["new_score"]),
                "parents": [p for p in event["parent_ids"] if p is not None],
            },
        )

    def on_candidate_rejected(self, event) -> None:
        self._event(
            "rejected",
            {
                "old": _score(event["old_score"]),
                "new": _score(event["new_score"]),
                "reason": str(event.get("reason", ""))[:300],
                # A metric that fails on the new candidate's outputs shows here, per case.
                "problems": dict(self.adapter.problems.get(self.proposed, {})),
            },
        )

    def on_valset_evaluated(self, event) -> None:
        self._event(
            "valset",
            {
                "candidate": event["candidate_idx"],
                "average": _score(event["average_score"]),
                "best": bool(event["is_best_program"]),
            },
        )

    def on_pareto_front_updated(self, event) -> None:
        self._event("front", {"front": list(event["new_front"])[:200]})

    def on_budget_updated(self, event) -> None:
        self.metric_calls = event["metric_calls_used"]
        self.flush()

    def on_state_saved(self, event) -> None:
        if event.get("run_dir"):
            self.sink.checkpoint(event["run_dir"])

    def on_optimization_end(self, event) -> None:
        self.state = event["final_state"]
        self.flush(force=True)

    # -- what the sink gets -------------------------------------------------------

    def _event(self, kind: str, data: dict) -> None:
        self.seq += 1
        self.pending.append({"kind": kind, "iteration": self.iteration, "data": data})

    def flush(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        if self.state is not None:
            new = self._new_candidates()
            if new:
                self.sink.candidates(new)
        if self.pending:
            events, self.pending = self.pending, []
            self.sink.events(events)
        self.sink.snapshot(self.snapshot())

    def _new_candidates(self) -> list[dict]:
        """The candidates not sent yet, and the last one sent again: its valset scores
        may have grown since (a policy that scores a subset first)."""
        total = len(self.state.program_candidates)
        rows = [self.candidate_row(idx) for idx in range(max(0, self.known - 1), total)]
        self.known = total
        return rows

    def candidate_row(self, idx: int) -> dict:
        state = self.state
        text = self.text_of(state.program_candidates[idx])
        scores = {_key(k): _score(v) for k, v in state.prog_candidate_val_subscores[idx].items()}
        parents = [p for p in state.parent_program_for_candidate[idx] if p is not None]
        digest = candidate_digest(text)
        return {
            "idx": idx,
            "text": text,
            "parents": parents,
            "val_scores": scores,
            "average": sum(scores.values()) / len(scores) if scores else 0.0,
            "discovered_at": int(state.num_metric_calls_by_discovery[idx]),
            "problems": dict(self.adapter.problems.get(digest, {})),
        }

    def snapshot(self) -> dict:
        state = self.state
        spend = self.spend()
        if self.calls is not None:
            self.metric_calls = max(self.metric_calls, self.calls.used)
        progress = {
            "iteration": self.iteration,
            "metric_calls": self.metric_calls,
            "max_metric_calls": self.max_metric_calls,
            "spend": spend,
            "cases_run": self.adapter.cases_run,
        }
        if state is None:
            return progress
        averages = [
            (sum(s.values()) / len(s)) if s else 0.0 for s in state.prog_candidate_val_subscores
        ]
        best = max(range(len(averages)), key=lambda i: (averages[i], -i)) if averages else 0
        # The best validation score over metric calls: a step at each discovery.
        points = []
        running = None
        order = sorted(range(len(averages)), key=lambda i: state.num_metric_calls_by_discovery[i])
        for idx in order:
            calls = int(state.num_metric_calls_by_discovery[idx])
            if running is None or averages[idx] > running:
                running = averages[idx]
                points.append([calls, running])
        self.metric_calls = max(self.metric_calls, int(state.total_num_evals))
        progress.update(
            metric_calls=self.metric_calls,
            iteration=max(self.iteration, int(state.i) + 1),
            candidates=len(averages),
            best={"idx": best, "score": averages[best] if averages else 0.0},
            seed_score=averages[0] if averages else 0.0,
            points=points,
            front={
                _key(val_id): sorted(int(p) for p in progs)
                for val_id, progs in state.program_at_pareto_front_valset.items()
            },
        )
        return progress
