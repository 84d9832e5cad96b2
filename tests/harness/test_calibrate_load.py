"""``python -m schedlab.benchmarks.harness.suites.calibrate load``: the compression at which YARN-CS queues
the paper's 4,102 s, on the table as recorded or on a seed's bootstrap draw (``--resample``). The replays are
long (82,247 jobs), so the replay is replaced by a stub that records the case it was given; the bisection is
checked on a known monotone function."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from schedlab.benchmarks.harness.suites import calibrate
from schedlab.topology.errors import SpecError


@pytest.fixture
def replays(monkeypatch):
    """Each replay returns an average queueing delay of 1,000 x load^2 s and records its case."""
    seen = []

    def fake(case):
        seen.append(case)
        return SimpleNamespace(metrics={"avg_queue": 1000.0 * case.source.load ** 2})

    monkeypatch.setattr(calibrate, "run_replay", fake)
    return seen


def test_yarn_queue_replays_the_draw_asked_for(replays):
    assert calibrate.yarn_queue(2.0, traces="T", seed=3, resample="bootstrap") == 4000.0
    case = replays[-1]
    assert case.policy == "yarn-cs" and case.semantics == "tiresias" and case.seed == 3
    assert case.source.resample == "bootstrap" and case.source.seed == 3 and case.source.load == 2.0
    assert case.source.trace.startswith("T") and case.source.cluster == "philly"
    calibrate.yarn_queue(2.0, traces="T")
    assert replays[-1].source.resample == "none" and replays[-1].source.seed == 0  # the table as recorded


def test_calibrate_load_bisects_on_the_draw(replays):
    lines = []
    got = calibrate.calibrate_load(4102.0, 1.0, 5.0, 8, traces="T", seed=2, resample="bootstrap", log=lines.append)
    assert len(replays) == 8 == len(lines) and all(c.source.resample == "bootstrap" and c.source.seed == 2
                                                  for c in replays)
    assert abs(got - math.sqrt(4.102)) < 0.02  # 1,000 x load^2 = 4,102 s
    assert lines[0].startswith("load 2.2361: YARN-CS average queueing 5,000 s (target 4,102)")
    with pytest.raises(SpecError) as e:
        calibrate.calibrate_load(resample="jackknife")
    assert e.value.field == "resample"


def test_cli_passes_seed_and_resample(replays, capsys):
    assert calibrate.main(["load", "--steps", "3", "--seed", "4", "--resample", "bootstrap", "--traces", "T"]) == 0
    out = capsys.readouterr().out
    assert "(seed 4, resample bootstrap)" in out and out.count("YARN-CS average queueing") == 3
    assert {(c.source.seed, c.source.resample) for c in replays} == {(4, "bootstrap")}
    with pytest.raises(SystemExit):
        calibrate.main(["load", "--resample", "jackknife"])
