"""``bench_exact_loop --check-method``: every solved round of the exact-in-the-loop replay solved again
with the full per-machine model proves the same optimum (the default ``joint-2stage`` method changes the
proof, never the round's optimal value)."""

from schedlab.benchmarks.bench_exact_loop import replay


def test_every_round_of_a_short_replay_has_the_full_models_optimum():
    out = replay("exact-joint", {}, jobs=12, check_method="joint")
    chk = out["check"]
    assert chk["method"] == "joint" and chk["rounds"] == out["counters"]["solves"] > 0
    assert chk["equal"] == chk["rounds"], chk["differ"]
    assert out["not_optimal"] == [] and out["unfinished"] == 0


def test_no_check_without_the_option():
    assert "check" not in replay("exact-joint", {}, jobs=3)
