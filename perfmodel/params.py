"""The 7 fittable parameters of Rubick's iteration-time model, with explicit units.

=============  ===========================================  ===========================================
parameter      meaning                                      unit (ours)
=============  ===========================================  ===========================================
``k_bwd``      backward / forward compute ratio             dimensionless
``k_sync``     overlap degree of DP all-reduce and backward  dimensionless exponent >= 1
``k_opt``      GPU optimizer time per parameter of a shard  seconds per 10^6 parameters
``k_opt_off``  CPU optimizer time (ZeRO-Offload)            seconds per 10^6 parameters, x CPU cores
``k_off``      overlap of DP all-reduce and PCIe offload    dimensionless exponent >= 1
``k_swap``     overlap of CPU optimizer and PCIe offload    dimensionless exponent >= 1
``k_const``    constant per-iteration overhead              seconds
=============  ===========================================  ===========================================

Two optional *effective bandwidths* join them (``b_intra``, ``b_inter``, GB/s = 10^9 bytes/s): what a
model's collectives actually reach inside one machine and across machines. ``None`` (the default of
:class:`PerfParams`) means "the topology's link figures"; a value caps them: the bandwidth a
communication group sees is ``min(B_topology, b_intra)`` when the group stays on one machine and
``min(B_topology, b_inter)`` when it crosses machines (TP groups never leave a machine). They are fitted
per model (:mod:`perfmodel.fitting`), bounded by the cluster's own figures (``[figure / 1000, figure]``:
an effective bandwidth never beats the link), starting from those figures.

``k_fwd3d`` (ours, dimensionless, ``None`` = 1): the forward time of TP/PP plans relative to the zoo's
forward time. The paper profiles the forward pass of 3D plans separately ("obtained from profilers ...
on a node"), and in its artifact the 3D plans run in another framework (Megatron-DeepSpeed, the others
in DeepSpeed); the measured tables have no forward time for any 3D row, so the factor is fitted, and
only where the samples hold both 3D and DP-family rows (bounds ``[0.1, 10]``, start 1).

``k_share`` (ours, exponent in ``[0, 1]``, ``None`` = 0): how the inter-machine phase of the hierarchical
all-reduce (:mod:`perfmodel.iteration`) speeds up with the GPUs a machine holds: the inter-machine
bandwidth of a DP group is ``b_inter x n_min^k_share`` (``n_min`` = the smallest per-machine GPU count
of the group). ``1``: every GPU moves its own ``1 / n`` share over its own path (one NIC rail per GPU);
``0`` (the default: the topology's inter-machine figure is per machine): the machine's GPUs share its
link. Fitted (bounds ``[1e-6, 1]`` in log coordinates, start 1e-6) where the multi-machine samples hold two or more
distinct ``n_min``.

``k_parity`` (ours, dimensionless >= 0, ``None`` = 0): the placement-parity penalty. Where a DP group
crossing machines has a machine holding an odd GPU count and a machine holding more than one
(``35``, ``112``, ``233``; not one GPU per machine, ``11111111``), its inter-machine phase takes
``k_parity x 2 e P / (t p) / B_inter'`` longer (a fixed cost: ``k_parity`` all-reduce volumes of the whole
model over the inter-machine link, whatever the machines and counts). The ViT table
shows it (odd-count placements 4-9x the one-machine time, even ones 1.0-1.4x), BERT does not; fitted
(bounds ``[1e-6, 100]`` in log coordinates, start 1e-6) where the multi-machine samples hold both
odd-count and even-count DP groups.

``k_offx`` (ours, dimensionless > 0, ``None`` = 1): the inter-machine phase of a ZeRO-Offload plan's
hierarchical all-reduce, relative to the same phase of the DP-family plans (ZeRO-2 reduce-scatters the
gradients in large buckets while the CPU optimizer and the PCIe copies run: its cross-machine traffic is
not the DP-family all-reduce's). The inter-machine phase of ZeRO-Offload rows is ``k_offx`` times the
DP-family form ``v_he / n_min^s`` (the parity term never applies to ZeRO-Offload). Fitted (bounds ``[1e-3, 10]`` in log coordinates, start 1)
where the multi-machine samples hold both ZeRO-Offload and DP-family groups crossing machines (the ViT
table: ZeRO-Offload across machines costs 0.01-0.05 s over one machine where ``ga`` costs up to 0.1 s).

Conversion of the artifact's shipped fits (ms, and parameter size ``ps = params / 2**20``):
``T[ms] = k_art * params / 2**20``  =>  ``T[s] = k_ours * params / 10**6`` with
``k_ours = k_art * 1e-3 * 10**6 / 2**20`` (for ``k_opt`` and ``k_opt_off``); ``k_const[s] =
k_const[ms] / 1000``; the exponents and ``k_bwd`` are unitless and unchanged. The artifact's fitted
bandwidths (``B_pcie``, ``B_nvlink``) are not used: bandwidths come from the cluster topology.
Overlap exponents below 1 are clipped to 1 (the paper's ``f_k`` ranges from the sum, ``k = 1``, to the
max, ``k -> inf``; ``k < 1`` would make two overlapped stages take *longer* than in sequence). One
shipped fit has one: GPT-2's ``k_off = 0.02791`` (with it, ``f_k(x, x) = 2^(1/k) x ~ 6e10 x`` whenever
the DP all-reduce and the PCIe traffic are both non-zero), so GPT-2's ``k_off`` becomes 1 (the sum).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import astuple, dataclass, fields, replace
from types import MappingProxyType

from schedlab.topology.errors import SpecError

PARAM_NAMES: tuple[str, ...] = ("k_bwd", "k_sync", "k_opt", "k_opt_off", "k_off", "k_swap", "k_const")
BANDWIDTH_NAMES: tuple[str, ...] = ("b_intra", "b_inter")  # effective GB/s; None = the topology's
OPTIONAL_NAMES: tuple[str, ...] = BANDWIDTH_NAMES + ("k_fwd3d", "k_share", "k_parity", "k_offx")  # fitted only where samples inform them
MS_PER_MIB_TO_S_PER_M = 1e-3 * 1e6 / 2**20  # artifact k (ms per 2^20 params) -> ours (s per 10^6 params)


@dataclass(frozen=True, slots=True)
class PerfParams:
    """The 7 fitted parameters and the two optional effective bandwidths (units in the module
    docstring; ``b_intra`` / ``b_inter`` None = the topology's figures)."""

    k_bwd: float = 2.0
    k_sync: float = 2.0
    k_opt: float = 3e-5
    k_opt_off: float = 4e-3
    k_off: float = 2.0
    k_swap: float = 2.0
    k_const: float = 0.01
    b_intra: float | None = None
    b_inter: float | None = None
    k_fwd3d: float | None = None
    k_share: float | None = None
    k_parity: float | None = None
    k_offx: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in OPTIONAL_NAMES:
                if f.name == "k_parity":
                    if v is not None and (not isinstance(v, (int, float)) or not v >= 0 or v != v):
                        raise SpecError(f"k_parity must be None or a number >= 0, got {v!r}",
                                        source="<PerfParams>", field=f.name)
                    continue
                if f.name == "k_share":
                    if v is not None and (not isinstance(v, (int, float)) or not 0 <= v <= 1):
                        raise SpecError(f"k_share must be None or a number in [0, 1], got {v!r}",
                                        source="<PerfParams>", field=f.name)
                    continue
                if v is not None and (not isinstance(v, (int, float)) or not v > 0 or v != v):
                    raise SpecError(f"{f.name} must be None or a number > 0, got {v!r}", source="<PerfParams>",
                                    field=f.name)
                continue
            if not isinstance(v, (int, float)) or v != v or v < 0:
                raise SpecError(f"{f.name} must be a number >= 0, got {v!r}", source="<PerfParams>", field=f.name)
        for f in ("k_sync", "k_off", "k_swap"):
            if getattr(self, f) < 1.0:
                raise SpecError(f"overlap exponent {f} must be >= 1, got {getattr(self, f)!r}",
                                source="<PerfParams>", field=f)

    def as_tuple(self) -> tuple[float | None, ...]:
        """All 13 fields in order (the 7 parameters, then ``b_intra``, ``b_inter``, ``k_fwd3d``, ``k_share``,
        ``k_parity``, ``k_offx``)."""
        return astuple(self)

    def to_dict(self) -> dict[str, float | None]:
        return dict(zip(PARAM_NAMES + OPTIONAL_NAMES, self.as_tuple(), strict=True))

    def with_bandwidths(self, b_intra: float | None, b_inter: float | None) -> PerfParams:
        return replace(self, b_intra=b_intra, b_inter=b_inter)


def from_artifact(k_bwd: float, k_sync: float, k_opt: float, k_opt_off: float, k_const: float,
                  k_off: float, k_swap: float) -> PerfParams:
    """Convert one row of the artifact's shipped fits (its column order) to our units."""
    return PerfParams(k_bwd=k_bwd, k_sync=max(1.0, k_sync), k_opt=k_opt * MS_PER_MIB_TO_S_PER_M,
                      k_opt_off=k_opt_off * MS_PER_MIB_TO_S_PER_M, k_off=max(1.0, k_off),
                      k_swap=max(1.0, k_swap), k_const=k_const / 1000.0)


# The artifact's shipped fits (reference-systems.md), converted. LLaMA-30B has none: LLaMA-7B's (ours).
ARTIFACT_PARAMS: MappingProxyType[str, PerfParams] = MappingProxyType({
    "bert": from_artifact(1.7763, 1.1410, 1e-8, 4.4006, 15.2575, 37.2890, 26.2219),
    "gpt2": from_artifact(2.2955, 71.2166, 0.05217, 4.8772, 1.7865, 0.02791, 51.4894),
    "t5": from_artifact(1.2754, 1.0, 1e-8, 3.4538, 11.6160, 224.8697, 61.6802),
    "vit": from_artifact(1.0, 13.5475, 0.09786, 1e-8, 5.2013, 15.6927, 21.6474),
    "roberta": from_artifact(1.7226, 1.2055, 1e-8, 2.2005, 15.7372, 16.6353, 32.9531),
    "llama7": from_artifact(2.0, 10.0, 0.03, 1e-8, 1.04928, 1.11921, 1000.0),
})

# Documented defaults for models without shipped fits (ours): backward = 2 x forward (the usual
# FLOP ratio), moderate overlap (k = 2), fused Adam on GPU ~0.03 ms per 10^6 parameters, CPU Adam ~4 ms per
# 10^6 parameters per core, 10 ms constant overhead.
DEFAULT_PARAMS = PerfParams()
FAMILY_DEFAULTS: MappingProxyType[str, str] = MappingProxyType({"llama30": "llama7", "bert_large": "bert"})

# Ours: fitted on every row of the Rubick artifact's measured placement tables that is inside our plan
# space and not an anomaly (rubick-64; zoo forward times; LLaMA-30B's ZeRO-Offload parameters are
# LLaMA-7B's, its table has no ZeRO-Offload row). Regenerate with
# ``python -m schedlab.benchmarks.perf_validation --print-params``; held-out errors of the procedure in
# docs/perfmodel-validation.md (kfold).
FITTED_PARAMS: MappingProxyType[str, PerfParams] = MappingProxyType({
    "vit": PerfParams(k_bwd=1.657, k_sync=1.86, k_opt=1e-07, k_opt_off=0.009333, k_off=1.0, k_swap=1.605, k_const=0.03111,
                b_intra=16.21, b_inter=2.22, k_fwd3d=None, k_share=0.8314, k_parity=1.408, k_offx=0.5354),
    "roberta": PerfParams(k_bwd=1.434, k_sync=1.07, k_opt=1e-07, k_opt_off=0.006542, k_off=1.0, k_swap=1.044, k_const=0.05467,
                b_intra=24.06, b_inter=8.569, k_fwd3d=None, k_share=1e-06, k_parity=0.01764, k_offx=1.434),
    "bert": PerfParams(k_bwd=1.602, k_sync=1.0, k_opt=1e-07, k_opt_off=0.008596, k_off=1.0, k_swap=1.561, k_const=0.0478,
                b_intra=26.98, b_inter=6.489, k_fwd3d=None, k_share=1e-06, k_parity=1e-06, k_offx=1.018),
    "t5": PerfParams(k_bwd=1.118, k_sync=1.218, k_opt=2.711e-06, k_opt_off=0.008177, k_off=1.0, k_swap=1.256, k_const=0.1227,
                b_intra=39.8, b_inter=7.378, k_fwd3d=3.401, k_share=1e-06, k_parity=0.2065, k_offx=1.162),
    "gpt2": PerfParams(k_bwd=1.948, k_sync=1.047, k_opt=5.147e-05, k_opt_off=0.01014, k_off=1.0, k_swap=1.03, k_const=1e-07,
                b_intra=29.29, b_inter=7.468, k_fwd3d=0.9215, k_share=1e-06, k_parity=1e-06, k_offx=1.293),
    "llama7": PerfParams(k_bwd=5.836, k_sync=1.0, k_opt=9.901e-05, k_opt_off=0.04141, k_off=1.0, k_swap=1.773, k_const=0.04969,
                b_intra=204.3, b_inter=5.633, k_fwd3d=0.2701, k_share=0.7718, k_parity=None, k_offx=None),
    "llama30": PerfParams(k_bwd=1.756, k_sync=1.0, k_opt=0.000131, k_opt_off=0.04141, k_off=1.0, k_swap=1.773, k_const=0.02145,
                b_intra=330.2, b_inter=4.814, k_fwd3d=0.2701, k_share=0.7718, k_parity=None, k_offx=None),
})

# The previous round's model (main before issue 24): fitted the same way with the flat all-reduce (no
# per-machine counts). The ``flat`` calibration = these parameters + the flat formula; the default, since
# the exact joint model's option classes assume a placement's throughput depends only on its tier and
# alignment (docs/perfmodel.md, "Calibrations").
FLAT_PARAMS: MappingProxyType[str, PerfParams] = MappingProxyType({
    "vit": PerfParams(k_bwd=2.137, k_sync=1.0, k_opt=1e-07, k_opt_off=0.005611, k_off=1.317, k_swap=1.152, k_const=0.03452,
                b_intra=77.14, b_inter=9.402, k_fwd3d=None),
    "roberta": PerfParams(k_bwd=1.544, k_sync=1.053, k_opt=1e-07, k_opt_off=0.0046, k_off=1.0, k_swap=1.627, k_const=0.041,
                b_intra=22.16, b_inter=10.12, k_fwd3d=None),
    "bert": PerfParams(k_bwd=1.41, k_sync=1.0, k_opt=2.075e-06, k_opt_off=0.008075, k_off=1.682, k_swap=2.591, k_const=0.1074,
                b_intra=400.0, b_inter=14.16, k_fwd3d=None),
    "t5": PerfParams(k_bwd=0.7819, k_sync=1.0, k_opt=1.854e-05, k_opt_off=0.007609, k_off=1.856, k_swap=3.831, k_const=0.2395,
                b_intra=400.0, b_inter=12.37, k_fwd3d=3.8),
    "gpt2": PerfParams(k_bwd=1.996, k_sync=1.0, k_opt=6.007e-05, k_opt_off=0.00858, k_off=1.349, k_swap=1.071, k_const=0.008762,
                b_intra=33.26, b_inter=10.61, k_fwd3d=0.9122),
    "llama7": PerfParams(k_bwd=6.0, k_sync=1.289, k_opt=0.0001001, k_opt_off=0.04053, k_off=1.0, k_swap=2.957, k_const=0.1321,
                b_intra=179.5, b_inter=8.773, k_fwd3d=0.2569),
    "llama30": PerfParams(k_bwd=2.32, k_sync=1.0, k_opt=9.684e-05, k_opt_off=0.04053, k_off=1.0, k_swap=2.957, k_const=0.0382,
                b_intra=400.0, b_inter=11.86, k_fwd3d=0.2569),
})

# "measured" answers from the measured tables where they hold the query (perfmodel.measured) and with
# the fitted parameters elsewhere. Only the calibrations in FLAT_CALIBRATIONS drop the per-machine counts.
CALIBRATIONS: MappingProxyType[str, Mapping[str, PerfParams]] = MappingProxyType({
    "flat": FLAT_PARAMS, "fitted": FITTED_PARAMS, "measured": FITTED_PARAMS, "artifact": ARTIFACT_PARAMS})
FLAT_CALIBRATIONS: frozenset[str] = frozenset({"flat"})
DEFAULT_CALIBRATION = "flat"


def default_params(model: str, calibration: str = DEFAULT_CALIBRATION) -> PerfParams:
    """The default parameters of ``model`` under ``calibration``: ``flat`` (the default: ours with the flat
    all-reduce, :data:`FLAT_PARAMS`), ``fitted`` (ours, hierarchical all-reduce, fitted on the
    measured tables, :data:`FITTED_PARAMS`; ``measured`` uses them where the tables lack a query) or
    ``artifact`` (the artifact's shipped fits converted,
    :data:`ARTIFACT_PARAMS`); a model the calibration lacks takes its family's (LLaMA-30B: LLaMA-7B;
    bert_large: BERT), else :data:`DEFAULT_PARAMS`."""
    try:
        table = CALIBRATIONS[calibration]
    except KeyError:
        raise SpecError(f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}",
                        source="<default_params>", field="calibration") from None
    if model in table:
        return table[model]
    return table.get(FAMILY_DEFAULTS.get(model, model), DEFAULT_PARAMS)


# Fitting bounds (ours): wide, in our units.
BOUNDS: tuple[tuple[float, float], ...] = (
    (0.5, 6.0),      # k_bwd
    (1.0, 100.0),    # k_sync
    (0.0, 0.05),     # k_opt  (s per 10^6 params)
    (0.0, 1.0),      # k_opt_off (s per 10^6 params x cores)
    (1.0, 100.0),    # k_off
    (1.0, 100.0),    # k_swap
    (0.0, 30.0),     # k_const (s)
)
# Effective bandwidths are fitted inside [figure / BANDWIDTH_SPAN, figure], the figure being the
# cluster's own link (intra-machine fabric, fastest machine-to-machine path): ours.
BANDWIDTH_SPAN = 1000.0
FWD3D_BOUNDS = (0.1, 10.0)
SHARE_BOUNDS = (0.0, 1.0)
PARITY_BOUNDS = (1e-6, 100.0)
OFFX_BOUNDS = (1e-3, 10.0)


__all__ = ["ARTIFACT_PARAMS", "BANDWIDTH_NAMES", "BANDWIDTH_SPAN", "BOUNDS", "CALIBRATIONS",
           "DEFAULT_CALIBRATION", "DEFAULT_PARAMS", "FAMILY_DEFAULTS", "FITTED_PARAMS", "FLAT_CALIBRATIONS",
           "FLAT_PARAMS", "FWD3D_BOUNDS", "MS_PER_MIB_TO_S_PER_M", "OPTIONAL_NAMES", "PARAM_NAMES",
           "OFFX_BOUNDS", "PARITY_BOUNDS", "PerfParams", "SHARE_BOUNDS", "default_params", "from_artifact"]
