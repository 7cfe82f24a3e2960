"""Reduce an exception to the frames of the user's metric.py.

Only frames whose code was compiled from "metric.py" are kept, so the user
sees their own line numbers and none of the runner's internals.
"""

from __future__ import annotations

from types import TracebackType

from skynet.safe import NAME_LIMIT, clip, safe_message, type_name

FILENAME = "metric.py"
HEAD_FRAMES = 10
TAIL_FRAMES = 30
TEXT_LIMIT = 200


def metric_frames(
    tb: TracebackType | None, source_lines: list[str], filename: str = FILENAME
) -> tuple[list[dict], int]:
    """([{"line", "function", "text"}], omitted) for the user file's frames (metric.py,
    or program.py for an artifact), outermost first.

    Deep recursion keeps the first HEAD_FRAMES and last TAIL_FRAMES frames and
    counts the rest in `omitted`, keeping the report small.
    """
    frames = []
    # As traceback.walk_tb does; that module (and linecache, tokenize) is not imported
    # here, since every sandbox imports this one.
    while tb is not None:
        frame, lineno = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
        code = frame.f_code
        if code.co_filename != filename:
            continue
        text = ""
        if lineno is not None and 1 <= lineno <= len(source_lines):
            text = clip(source_lines[lineno - 1].strip(), TEXT_LIMIT)
        frames.append({"line": lineno, "function": clip(code.co_name, NAME_LIMIT), "text": text})
    omitted = 0
    if len(frames) > HEAD_FRAMES + TAIL_FRAMES:
        omitted = len(frames) - HEAD_FRAMES - TAIL_FRAMES
        frames = frames[:HEAD_FRAMES] + frames[-TAIL_FRAMES:]
    return frames, omitted


def describe(exc: BaseException, source_lines: list[str], filename: str = FILENAME) -> dict:
    """{"exception": {"type", "message", "omitted_frames"}, "traceback": [...]}."""
    try:
        frames, omitted = metric_frames(exc.__traceback__, source_lines, filename)
    except Exception:  # a broken traceback must not lose the exception itself
        frames, omitted = [], 0
    return {
        "exception": {
            "type": type_name(exc),
            "message": safe_message(exc),
            "omitted_frames": omitted,
        },
        "traceback": frames,
    }
