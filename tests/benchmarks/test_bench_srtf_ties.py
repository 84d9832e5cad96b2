"""Old float against new integer SRTF/SRSF keys (``bench_srtf_ties``): every divergence of the decisions,
from a common state, inverts only pairs of jobs whose old float keys are less than 1 µs apart and whose
integer keys are equal (a tie resolved by the tie rule instead of by rounding)."""

from __future__ import annotations

import subprocess

import pytest

from schedlab.benchmarks import bench_srtf_ties as bst
from schedlab.benchmarks.bench_simulator import find_trace

pytestmark = pytest.mark.slow  # two replays of 9,000 jobs of the --load 5 Philly workload, twin policies


@pytest.fixture(autouse=True)
def _needs():
    if find_trace(None) is None:
        pytest.skip("Philly trace not found")
    try:
        bst.old_policy_class()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip(f"git history without {bst.OLD_REF}")


@pytest.mark.parametrize("policy", ["srtf", "srsf"])
def test_every_divergence_is_a_tie_order_change(policy):
    out = bst.measure(policy, "load5:9000")
    assert out["divergences"] > 0  # the window has tie cases (21 / 25 at session 8)
    assert out["inverted_pairs"] >= out["divergences"]
    assert out["max_new_gap"] == 0                 # every inverted pair is an exact integer tie
    assert out["max_old_gap_s"] < 1e-6             # ... of jobs whose float keys were < 1 µs apart
