"""Fuzzing trace files: broken bytes, encodings, NaN / inf / huge / negative numbers, missing and extra
columns. Only ``SchedlabError`` may escape a load; a load that succeeds gives finite, bounded jobs that
replay within an event budget (no hangs); valid text gives the same jobs in every supported encoding.
Example counts are bounded (the whole file runs in well under 40 s)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.simulator import Simulator
from schedlab.benchmarks.workloads.csvio import MAX_GPUS, MAX_SECONDS
from schedlab.benchmarks.workloads.source import WorkloadSource
from schedlab.topology.errors import SchedlabError

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
BAD_NUMBERS = ("nan", "NaN", "inf", "-inf", "Infinity", "1e300", "-1e300", "1e400", "-5", "0", "", " ", "abc", "1,5",
               "0x10", "99999999999999999999999", "1e-320", "3.5", "1_000", "True", "\u00e9", "2017-10-09 07:01:55",
               "9999-12-31", "0000-00-00", '"', "\x00")
GOOD = ("0", "1", "2", "8", "60", "3600", "12.5", "100")
PHILLY = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


class Budget(Exception):
    """Raised when a replay runs past its event budget (a hang, not a slow run)."""


def load(path, **kw):
    return WorkloadSource(trace=str(path), cluster="tiresias-60", **kw).build()


def replay_within_budget(w, c) -> None:
    budget = 20 * len(w.jobs) + 200

    def check(t, done, total):
        if sim.n_events > budget:
            raise Budget(f"{sim.n_events} events for {len(w.jobs)} jobs")

    sim = Simulator(c, w.jobs, all_policies().build("fifo", {}, seed=0), semantics="tiresias", progress=check,
                    progress_every=50)
    res = sim.run()
    # the artifact's semantics keep jobs larger than the cluster uncut: they never run, and are counted
    assert len(res.unfinished) == res.metrics.get("oversized_jobs", 0) and res.events <= budget


def outcome(path, **kw):
    """The load's jobs (checked) or the SchedlabError; anything else fails the test."""
    try:
        w, c = load(path, **kw)
    except SchedlabError as e:
        assert str(e)  # a message, naming something
        return e
    for j in w.jobs:
        assert math.isfinite(j.arrival) and 0 <= j.arrival <= 2 * MAX_SECONDS
        assert j.duration is None or (math.isfinite(j.duration) and 0 < j.duration <= MAX_SECONDS * MAX_GPUS)
        assert 1 <= j.requested.gpus <= c.total_gpus
        assert math.isfinite(j.iterations) and j.iterations > 0
    replay_within_budget(w, c)
    return w


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(tmp_path, data):
    p = tmp_path / "t.csv"
    p.write_bytes(data)
    outcome(p)
    outcome(p, columns="submit=a,duration=b,gpus=c")


cell = st.one_of(st.sampled_from(BAD_NUMBERS), st.sampled_from(GOOD),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-10**20, 10**20).map(str))


@FUZZ
@given(rows=st.lists(st.lists(cell, min_size=3, max_size=7), max_size=6),
       drop=st.sampled_from((None, *PHILLY)), extra=st.booleans(), lenient=st.booleans())
def test_philly_cells_nan_inf_huge_negative_missing_extra(tmp_path, rows, drop, extra, lenient):
    header = [c for c in PHILLY if c != drop] + (["extra"] if extra else [])
    lines = [",".join(header)]
    for r in rows:
        base = ["2017-10-09 07:01:55", *r]  # a valid date half of the time, fuzz cells after it
        lines.append(",".join(base[:len(header) + (len(r) % 3) - 1]))
    p = tmp_path / "p.csv"
    p.write_text("\n".join(lines) + "\n")
    outcome(p, lenient=lenient)


@FUZZ
@given(rows=st.lists(st.tuples(cell, cell, cell, st.sampled_from(("resnet50", "bert", "??", "", "llama30"))),
                     min_size=1, max_size=6),
       unit=st.sampled_from(("s", "ms", "min", "h")), origin=st.sampled_from((None, "first", "file", "0", "5")),
       lenient=st.booleans())
def test_generic_cells_units_and_origins(tmp_path, rows, unit, origin, lenient):
    p = tmp_path / "g.csv"
    p.write_text("t,d,g,m\n" + "".join(f"{a},{b},{c},{m}\n" for a, b, c, m in rows))
    outcome(p, columns="submit=t,duration=d,gpus=g,model=m", time_unit=unit, time_origin=origin, lenient=lenient)


VALID = "t,d,g,who\n0,60,1,\u00e9quipe\n30,120,2,\u00fcber\n45,30,4,plain\n"


@FUZZ
@given(enc=st.sampled_from(("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1",
                            "cp1252")),
       cut=st.integers(0, 8))
def test_encodings_same_jobs_or_a_clear_error(tmp_path, enc, cut):
    data = VALID.encode(enc)
    if cut:
        data = data[:-cut]  # a truncated file (possibly mid-character)
    p = tmp_path / "e.csv"
    p.write_bytes(data)
    r = outcome(p, columns="submit=t,duration=d,gpus=g,tenant=who")
    if not cut and enc in ("utf-8", "utf-8-sig", "utf-16", "utf-32"):  # decodable: the same jobs
        assert not isinstance(r, SchedlabError), r
        assert [(j.arrival, j.duration, j.requested.gpus, j.tenant) for j in r.jobs] == [
            (0.0, 60.0, 1, "\u00e9quipe"), (30.0, 120.0, 2, "\u00fcber"), (45.0, 30.0, 4, "plain")]
    if enc in ("utf-16-le", "utf-16-be") and not cut:
        assert isinstance(r, SchedlabError) and "UTF-16" in str(r)


def test_regressions_from_the_issue(tmp_path):
    """The examples of issue 9: NaN submit (hung), inf submit (IndexError), 1e300 duration (printed as a
    300-digit average), UTF-16 and binary traces (UnicodeDecodeError)."""
    cases = {"nan submit": "t,d,g\nnan,60,1\n", "inf submit": "t,d,g\ninf,60,1\n",
             "huge duration": "t,d,g\n0,1e300,1\n", "negative gpus": "t,d,g\n0,60,-3\n"}
    for name, text in cases.items():
        p = tmp_path / "x.csv"
        p.write_text(text)
        e = outcome(p, columns="submit=t,duration=d,gpus=g")
        assert isinstance(e, SchedlabError), name
        assert e.line == 2 and e.column in ("t", "d", "g") and str(p) in str(e), name
    p = tmp_path / "u16.csv"
    p.write_bytes("t,d,g\n0,60,1\n".encode("utf-16-le"))
    assert "UTF-16" in str(outcome(p, columns="submit=t,duration=d,gpus=g"))
    p.write_bytes(b"PK\x03\x04\x00\x00binary")
    assert "binary" in str(outcome(p))
