"""A digest of a replay's records (job rows, state samples and segments), to show that a change of
the simulator or of a policy's implementation left every record byte-identical."""

from __future__ import annotations

import hashlib

from schedlab.benchmarks.simulator.records import Recorder

__all__ = ["records_digest"]


def records_digest(recorder: Recorder) -> str:
    """SHA-256 over the ``repr`` of every job record, state sample and segment, in order (``repr`` of a
    float is exact, so equal digests mean equal records to the bit)."""
    h = hashlib.sha256()
    for part in (recorder.jobs, recorder.series, recorder.segments or ()):
        for row in part:
            h.update(repr(row).encode())
            h.update(b"\n")
        h.update(b"--\n")
    return h.hexdigest()
