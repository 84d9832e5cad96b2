"""``records.job_record`` (the simulator's constructor without the frozen ``__init__``) builds the same
record as ``JobRecord(...)``, covers every field, and the record stays frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from schedlab.benchmarks.simulator.records import JOB_FIELDS, JobRecord, job_record

VALUES = ("j1", "resnet50", "t", "best-effort", 4, 100.0, 1.5, 2.0, 30.0, 28.5, 0.5, 0.5, 112.0, 28.0, 0.0, 1.25,
          1, 0, "machine|rack", 27.0, 8, 3.9, 1.7)


def test_same_record_every_field():
    assert tuple(inspect.signature(job_record).parameters) == JOB_FIELDS
    fast, ref = job_record(*VALUES), JobRecord(*VALUES)
    assert fast == ref and hash(fast) == hash(ref) and dataclasses.astuple(fast) == VALUES
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.jct = 0.0  # type: ignore[misc]
