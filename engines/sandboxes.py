"""The sandboxes of one run, held for the whole run.

A check takes fresh warm sandboxes from the worker's pool and gives them back to be
killed. A run asks for cases in many small batches (gepa's minibatch of 3, then the
validation set), and a fresh pair per batch would wait on the pool's refill. So a run
holds its pair from its first batch to its end: the metric's sandbox only ever runs
this run's metric, and the run's sandbox only this run's candidates (every case is still
a process of its own, forked from them). contract.runner.take_boxes takes the metric's
first and then the run's, so the n-th take of a batch is always the same role.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from contract.runner import SandboxSource
from contract.warm import WarmSandbox


class HeldSandboxes:
    """A SandboxSource over `source` that keeps what it took until close()."""

    def __init__(self, source: SandboxSource, *, run_source: SandboxSource | None = None) -> None:
        self.source = source
        # Where the run's sandbox (the second of a batch) comes from, when it is not
        # `source`: a DSPy program's run needs one with dspy loaded.
        self.sources = [source, run_source or source]
        self.slots: list[WarmSandbox | None] = [None, None]
        self.taken = 0

    def take(self) -> WarmSandbox:
        slot = self.taken
        self.taken += 1
        if slot >= len(self.slots):
            self.slots.append(None)
        held = self.slots[slot]
        source = self.sources[min(slot, 1)]
        if held is not None and not held.alive:
            self.slots[slot] = None
            source.release(held)
            held = None
        if held is None:
            held = source.take()
            self.slots[slot] = held
        return held

    def release(self, warm: WarmSandbox) -> None:
        # Kept for the next batch; a batch gives back everything it took at its end.
        self.taken = 0

    def close(self) -> None:
        for index, held in enumerate(self.slots):
            if held is not None:
                self.slots[index] = None
                self.sources[min(index, 1)].release(held)


class StartedOnOneThread:
    """A SandboxSource whose sandboxes are all started on one thread of its own, which
    lives until close(). A sandbox dies with the thread that started it (bubblewrap's
    --die-with-parent is PR_SET_PDEATHSIG, which Linux ties to the thread), and the
    threads dspy runs a batch's cases on end with the batch."""

    def __init__(self, source: SandboxSource) -> None:
        self.source = source
        self.starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-starter")

    def take(self) -> WarmSandbox:
        return self.starter.submit(self.source.take).result()

    def release(self, warm: WarmSandbox) -> None:
        self.source.release(warm)

    def close(self) -> None:
        self.starter.shutdown(wait=True)
