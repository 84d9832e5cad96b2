"""Discrete-event cluster simulator: event core, rate models, costs, records, metrics."""

from schedlab.benchmarks.simulator.costs import COSTS, SEMANTICS, CostModel, Semantics, cost_model, semantics
from schedlab.benchmarks.simulator.engine import SimResult, Simulator, StopReason, simulate
from schedlab.benchmarks.simulator.metrics import RunMetrics, summarize
from schedlab.benchmarks.simulator.rates import (
    PerfModelRates,
    RateModel,
    RealisticRates,
    ReferenceRates,
    TierRates,
)
from schedlab.benchmarks.simulator.records import JOB_FIELDS, SERIES_FIELDS, JobRecord, Recorder, Segment

__all__ = [
    "COSTS", "JOB_FIELDS", "SEMANTICS", "cost_model", "SERIES_FIELDS", "CostModel", "JobRecord", "PerfModelRates", "RateModel",
    "RealisticRates", "Recorder", "ReferenceRates", "RunMetrics", "Segment", "Semantics", "SimResult", "Simulator", "StopReason",
    "TierRates", "semantics", "simulate", "summarize",
]
