"""The shipped fitted (FITTED_PARAMS) and flat (FLAT_PARAMS) calibrations against the public Rubick tables
(skipped without traces)."""

from dataclasses import replace

import numpy as np
import pytest

from schedlab.perfmodel.fitting import predict
from schedlab.perfmodel.params import FITTED_PARAMS, FLAT_PARAMS
from schedlab.perfmodel.validation import MICRO_BATCH_RULES, load_table, pool_rows, with_micro_batch_rule
from schedlab.perfmodel.zoo import get_model
from schedlab.topology import preset

# Average in-sample error of the shipped fits on the rows they were fitted on (measured when they were
# generated, issue 24: hierarchical all-reduce and parity term, ViT pool with its placement-parity rows;
# +2 points): a regression guard that FITTED_PARAMS still belong to these tables, not a target.
BOUND = {"vit": 0.18, "roberta": 0.085, "bert": 0.07, "t5": 0.105, "gpt2": 0.08, "llama7": 0.05, "llama30": 0.025}


# The same for FLAT_PARAMS (calibration ``flat``, the default: the previous round's fits, flat all-reduce) on
# the rows they were fitted on (the pool without the placement-parity rows): the previous round's bounds.
FLAT_BOUND = {"vit": 0.16, "roberta": 0.09, "bert": 0.10, "t5": 0.15, "gpt2": 0.095, "llama7": 0.105,
              "llama30": 0.03}


def in_sample_error(traces_dir, name: str, flat: bool = False) -> float:
    cluster = preset("rubick-64")
    table = load_table(traces_dir / "rubick" / "placements" / f"{name}.csv", cluster)
    rows = [table.rows[i] for i in pool_rows(table.rows) if not (flat and table.rows[i].anomaly)]
    meas = np.array([r.sample.throughput for r in rows])
    errs = []
    for rule in MICRO_BATCH_RULES:  # the rule the fit preferred is not recorded: the better one
        samples = [replace(r.sample, plan=with_micro_batch_rule(r.plan, rule)) for r in rows]
        params = (FLAT_PARAMS if flat else FITTED_PARAMS)[table.model]
        pred = predict(get_model(table.model), params, samples, cluster, hierarchical=not flat)
        errs.append(float(np.mean(np.abs(pred - meas) / meas)))
    return min(errs)


@pytest.mark.parametrize("name", sorted(BOUND))
def test_shipped_fits_reproduce_their_tables(traces_dir, name):
    assert in_sample_error(traces_dir, name) < BOUND[name]


@pytest.mark.parametrize("name", sorted(FLAT_BOUND))
def test_flat_fits_reproduce_their_tables(traces_dir, name):
    assert in_sample_error(traces_dir, name, flat=True) < FLAT_BOUND[name]
