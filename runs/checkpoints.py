"""gepa's checkpoint as a run's row keeps it: signed by the runs worker that stores it,
verified by the one that puts it back in the run folder for gepa to load.

gepa loads its checkpoint with pickle, which runs whatever code the bytes name: whoever
could write the row (a database account, a restored backup) would run code in the runs
worker. So the row keeps, before gepa's bytes, an HMAC-SHA256 of the run's id and those
bytes, keyed from SECRET_KEY with a salt of its own (no other signature the project makes
can stand in for it). Bytes whose signature does not hold are never given to gepa: a
changed checkpoint, another run's moved into this row, and one stored before checkpoints
were signed alike. Every runs worker must therefore share the web's DJANGO_SECRET_KEY.
"""

from __future__ import annotations

from django.utils.crypto import constant_time_compare, salted_hmac

SALT = "skynet.optimizations.checkpoint"
HEADER = b"skynet-checkpoint-1\n"
_SIGNED_AT = len(HEADER) + 32  # the header, then a SHA-256 digest, then gepa's bytes


class CheckpointRefused(Exception):
    """The row's bytes are not a checkpoint this workbench signed for this run."""


def _digest(run_id: int, data: bytes) -> bytes:
    # The run's id is signed with the bytes: a checkpoint is good for its own run only.
    mac = salted_hmac(SALT, f"run {run_id}\n", algorithm="sha256")
    mac.update(data)
    return mac.digest()


def sign(run_id: int, data: bytes) -> bytes:
    """What the row keeps of gepa's checkpoint `data`: the header, its signature, `data`."""
    return HEADER + _digest(run_id, data) + data


def verify(run_id: int, stored: bytes | memoryview) -> bytes:
    """gepa's bytes from what the row keeps (PostgreSQL gives a memoryview); raises
    CheckpointRefused unless they were signed for this run with this SECRET_KEY."""
    stored = bytes(stored)
    if not stored.startswith(HEADER) or len(stored) < _SIGNED_AT:
        raise CheckpointRefused
    data = stored[_SIGNED_AT:]
    if not constant_time_compare(stored[len(HEADER) : _SIGNED_AT], _digest(run_id, data)):
        raise CheckpointRefused
    return data
