"""Calibration ``flat`` (the default) is the previous round's model exactly.

Every pinned figure was computed with the previous round's code (main at 475ed6a, where the default
calibration held these parameters and the flat all-reduce) by
``PerfModel(preset(c)).throughput(model, parse_plan(code, gpus), placement, cpus)``, the placement being the
counts laid on the cluster's machines rack by rack, and ``comm_overhead(model, tier, derived=True)``.
"""

import pytest

from schedlab.perfmodel import PerfModel, parse_plan
from schedlab.perfmodel.network import comm_overhead
from schedlab.perfmodel.params import DEFAULT_CALIBRATION, FLAT_PARAMS
from schedlab.topology.presets import preset

# cluster, model, plan code, GPUs per machine, CPUs, throughput (samples/s) on main
MAIN = [
    ("rubick-64", "vit", "dp", (8,), 8, 1182.700759136287),
    ("rubick-64", "bert", "ga", (4, 4), 8, 123.55043553537885),
    ("rubick-64", "bert", "ga", (2, 2, 2, 2), 8, 123.55043553537885),
    ("rubick-64", "vit", "dp", (3, 5), 8, 778.4906775627852),
    ("rubick-64", "gpt2", "zero-offload", (4, 4), 64, 9.507469377126977),
    ("rubick-64", "t5", "241", (4, 4), 8, 23.315130821207163),
    ("rubick-64", "llama7", "zero-dp", (8, 8), 16, 7.567943582020723),
    ("dally-2", "roberta", "dp", (1,) * 8, 8, 206.91001476857556),
]
# Dally's derived overheads (machine, rack, network) on main
MAIN_OVERHEAD = {"bert": (0.059487465690766905, 0.47262287360249, 0.47262287360249),
                 "gpt2": (0.3187310077864698, 0.999151113947029, 0.999151113947029),
                 "llama7": (0.017439882472547463, 0.4346058150706611, 0.4346058150706611)}


def _place(cluster, counts):
    ms = [m for r in cluster.racks for m in cluster.machines_in(r)]
    return {ms[i]: k for i, k in enumerate(counts)}


@pytest.mark.parametrize("cname,model,code,counts,cpus,expected", MAIN)
def test_flat_default_gives_the_previous_rounds_throughputs(cname, model, code, counts, cpus, expected):
    c = preset(cname)
    pm = PerfModel(c)
    place, plan = _place(c, counts), parse_plan(code, sum(counts))
    assert DEFAULT_CALIBRATION == "flat" and pm.params_for(model) == FLAT_PARAMS[model]
    assert pm.throughput(model, plan, place, cpus) == pytest.approx(expected, rel=1e-12)          # scalar path
    assert pm.throughputs(model, [plan], place, cpus)[0] == pytest.approx(expected, rel=1e-12)   # vectorised


@pytest.mark.parametrize("counts", [(2, 2, 2, 2), (3, 5), (4, 4)])
def test_fitted_is_the_hierarchical_model_and_differs(counts):
    """The pins can fail: ``fitted`` (hierarchical, refitted) gives other figures on the same queries."""
    c = preset("rubick-64")
    code, model = ("ga", "bert") if counts != (3, 5) else ("dp", "vit")
    expected = next(e for cn, m, k, ct, _, e in MAIN if (m, k, ct) == (model, code, counts))
    pm = PerfModel(c, calibration="fitted")
    got = pm.throughput(model, parse_plan(code, 8), _place(c, counts), 8)
    assert got != pytest.approx(expected, rel=1e-3)


def test_flat_best_plans_and_curve_as_on_main():
    c = preset("rubick-64")
    pm = PerfModel(c)
    for counts, tput in (((4, 4), 123.84238916538345), ((3, 5), 123.84238916538345), ((8, 8), 138.8911968931524)):
        plan, t = pm.best_plan("bert", _place(c, counts), 64)
        assert plan.name == "zero-dp" and t == pytest.approx(tput, rel=1e-12)
    rows = pm.curve("gpt2", "gpu", cpus=64, max_amount=16).rows()
    assert [(r["amount"], r["canonical_plan"]) for r in rows[-2:]] == [
        (15, "dp2-tp2-pp3-mb8-ga1-gc0-none"), (16, "dp4-tp2-pp2-mb4-ga1-gc0-none")]
    assert [r["throughput"] for r in rows[-2:]] == pytest.approx([35.33489028, 45.64829143], rel=1e-9)


@pytest.mark.parametrize("model", sorted(MAIN_OVERHEAD))
def test_dally_derived_overheads_as_on_main(model):
    got = tuple(comm_overhead(model, t, derived=True) for t in ("machine", "rack", "network"))
    assert got == pytest.approx(MAIN_OVERHEAD[model], rel=1e-12)
