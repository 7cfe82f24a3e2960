"""Convert's time and memory against the source's size, up to the form's 256 KB.

Two kinds of text, each at 8, 32, 64, 128 and 256 KB: a DSPy metric followed by one long
table of numbers (the hostile import of issue 37: the converter set it aside), and the
same metric followed by as much code (helper functions, which it cannot set aside). Each
point is one conversion through `convert_bounded`, the child process the web pages use,
held to its limits (10 CPU seconds, 1024 MB): the wall time, and the child's peak memory
(its maximum resident set, from getrusage of the children; each point in a fresh parent
so that maximum is its own).

The baseline, measured in the same run: the bare metric alone, converted the same way (a
child's start and the converter's imports). Each line prints its time as a ratio to that,
and its time per KB beyond it, which is flat when the conversion is linear in the size.
Usage:

    .venv/bin/python scripts/bench/bench_convert.py [--kinds data,code]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIZES_KB = (8, 32, 64, 128, 256)
DSPY = """\
import dspy


def metric(example, prediction, trace=None):
    return dspy.Prediction(score=float(example.answer == prediction.answer), feedback="")
"""

# One conversion in a fresh process: its wall time, its child's peak RSS, its outcome.
_POINT = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from contract.convert import ConvertError
from contract.convert.bounded import convert_bounded
source = sys.stdin.read()
start = time.perf_counter()
try:
    convert_bounded(source)
    outcome = "converted"
except ConvertError as exc:
    outcome = exc.code
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "outcome": outcome}))
"""


def text(kind: str, kb: int) -> str:
    size = kb * 1024
    if kind == "data":
        items, length = [], len(DSPY) + 12
        while length < size:
            items.append(str(len(items) % 1000))
            length += len(items[-1]) + 2
        return DSPY + "\nTABLE = [" + ", ".join(items) + "]\n"
    helpers, length, i = [], len(DSPY), 0
    while length < size:
        helpers.append(
            f"\ndef helper_{i}(a, b):\n    if a > b:\n        return a - b\n    return b + a * {i}\n"
        )
        length += len(helpers[-1])
        i += 1
    return DSPY + "".join(helpers)


def point(source: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _POINT, str(ROOT)],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="data,code")
    args = parser.parse_args()
    base = min((point(DSPY) for _ in range(3)), key=lambda p: p["seconds"])
    print(
        f"baseline: the bare metric, {base['seconds'] * 1000:.0f} ms, peak {base['peak_mb']:.0f} MB"
    )
    print(f"{'kind':5} {'KB':>4} {'time':>8} {'x base':>7} {'ms/KB':>6} {'peak MB':>8}  outcome")
    for kind in args.kinds.split(","):
        for kb in SIZES_KB:
            found = point(text(kind, kb))
            extra = (found["seconds"] - base["seconds"]) * 1000 / kb
            print(
                f"{kind:5} {kb:>4} {found['seconds']:>7.2f}s {found['seconds'] / base['seconds']:>6.1f}x"
                f" {extra:>6.1f} {found['peak_mb']:>8.0f}  {found['outcome']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
