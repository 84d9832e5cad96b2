r"""The Rubick artifact's own iteration-time model, re-implemented as a comparison baseline.

Written from reading the artifact (AlibabaPAI/reconfigurable-dl-scheduler, commit 80e8524):
``sched/morphling_sched/pred_throughput.py`` (``ThroughputFunction.throughput`` for DP-family plans,
``throughput_3D`` for PP-TP-DP codes), ``sched/morphling_sched/performance_model.py``
(``get_plan_with_fixed_res``: which forward time and bandwidth index a plan gets),
``sched/morphling_sched/profile_forward.py`` (``build_model`` without CUDA: the hand-typed one-GPU
forward times and parameter sizes) and ``sched/models/<model>.py`` (shipped fitted parameters,
``B_pcie`` / ``B_nvlink``, dimensions, local batch). No code is copied; the formulas are restated here,
*with the artifact's defects kept* (it is the baseline as shipped, not a corrected model):

Units as there: ms, ``ps = parameters / 2^20``, MB/ms (= GB/s). ``F`` = the hand-typed one-GPU forward
time, ``g`` GPUs, ``k_*`` the shipped fits.

* DP family (``ga``, ``gc``, ``zero-dp``, ``zero-offload``; ``ga`` is plain DP there):
  ``f = F / g`` (BERT: ``F / 1.8``, ``/ 3.2``, ``/ 5.8`` on 2, 4, 8 GPUs, ``F`` otherwise);
  ``T_bwd = k_bwd f``; ``V = 8 ps (g-1) / g``; ``B = B_nvlink`` on one machine, else the constant 2;
  ``S = (V/B)^k_sync + T_bwd^k_sync)^(1/k_sync)``; ``T_off = 4 ps / (g B_pcie)`` with ZeRO-Offload
  else 0; ``O = S`` without offload, else ``S + k_off + T_off`` (``k_off`` is *added*, not an overlap
  exponent); ``T_opt = k_opt ps`` (plain), ``k_opt ps / g`` (ZeRO-DP), ``k_opt_off ps / (g c)``
  (ZeRO-Offload, ``c`` CPU threads per GPU); ``T = a_f f + O + (T_opt + k_swap + T_off) + k_const``
  with ``a_f = 2`` under GC (``k_swap`` added for every plan).
* 3D codes ``pp tp dp``: ``n`` machines, ``q`` GPUs on the first one; ``d = n q / (tp pp)``,
  ``mb = b // d`` (``b`` the artifact's local batch); ``f = F dp / pp / 1.15^tp`` (the code's digits);
  ``T_bwd = k_bwd f``; ``T_tp = 32 sh (tp-1) mb l / tp / 2^20 / B_nvlink`` with ``sh = h s l`` (layers
  counted twice); ``T_pp = floor(16 mb sh / tp) / 20 / 2^20 pp`` (``pp > 1``); ``T_dp =
  floor(8 (d-1) / d ps / tp) / pp / B`` with ``B = B_nvlink`` when ``q > tp`` and ``pp = n``, else 20;
  ``T = f + (T_dp^k + T_bwd^k)^(1/k) + ps k_opt / (tp pp) + k_const + T_pp + T_tp``.

LLaMA-30B there takes BERT's dimensions, LLaMA-7B's parameter count and fits (both defects kept).
CPU threads per GPU: the table's ``cpu_threads``, else 8 with ZeRO-Offload and 1 otherwise (the
artifact's ``cpu_strategy``). The local batch is the artifact's unless the table records another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from schedlab.perfmodel.plans import ExecutionPlan, ZeroMode

MIB = 2 ** 20
OFF_NVLINK_DP = 2.0   # MB/ms the DP path assumes for any multi-machine placement
OFF_NVLINK_3D = 20.0  # MB/ms the 3D path assumes off NVLink
TP_FORWARD_GAIN = 1.15
BERT_FORWARD_DIVISORS = MappingProxyType({2: 1.8, 4: 3.2, 8: 5.8})


@dataclass(frozen=True, slots=True)
class ArtifactModel:
    """One model as the artifact's scheduler sees it (units of the module docstring)."""

    name: str
    hidden: int
    layers: int
    seq: int
    local_batch: int
    forward_ms: float
    params: int
    k_bwd: float
    k_sync: float
    k_opt: float
    k_opt_off: float
    k_const: float
    k_off: float
    k_swap: float
    b_pcie: float
    b_nvlink: float

    @property
    def ps(self) -> float:
        return self.params / MIB

    @property
    def seq_hid(self) -> int:
        return self.hidden * self.seq * self.layers


_LLAMA7 = dict(k_bwd=2.0, k_sync=10.0, k_opt=0.03, k_opt_off=1e-8, k_const=1.0492757598487223,
               k_off=1.1192066928294584, k_swap=1000.0, b_pcie=0.96, b_nvlink=150.0)
ARTIFACT_MODELS: MappingProxyType[str, ArtifactModel] = MappingProxyType({
    "bert": ArtifactModel("bert", 1536, 24, 1024, 32, 225.0, 336297858, 1.7762507345127174, 1.1410390978600897,
                          1e-8, 4.400603962116795, 15.257464643432971, 37.288983000053264, 26.221881110226107,
                          64.0, 119.4879085392442),
    "gpt2": ArtifactModel("gpt2", 1920, 24, 1024, 16, 1100.0, 1557686400, 2.2955055547729417, 71.21658539688131,
                          0.05217141753878825, 4.877226916846699, 1.786485024931732, 0.027912731457899787,
                          51.48938818523304, 59.720964902105614, 144.83763732303515),
    "t5": ArtifactModel("t5", 1280, 16, 768, 16, 410.0, 1240809472, 1.2754324551852874, 1.0, 1e-8,
                        3.4538198406863163, 11.616030890964971, 224.86968171631415, 61.68023191529816,
                        64.0, 161.02246829023724),
    "vit": ArtifactModel("vit", 768, 12, 1024, 64, 40.0, 85952456, 1.0, 13.54749257672695, 0.09786337059659733,
                         1e-8, 5.201298157965654, 15.692686524178942, 21.647413513688274, 6.1646901221266655,
                         29.7451292741858),
    "roberta": ArtifactModel("roberta", 1024, 24, 1024, 64, 480.0, 355412057, 1.7226216091452244,
                             1.205493103963666, 1e-8, 2.200462132207284, 15.73715000699807, 16.635258404842535,
                             32.9530767089104, 7.9107385391936935, 50.303643979067175),
    "llama7": ArtifactModel("llama7", 4096, 32, 2048, 8, 1000.0, 6738423808, **_LLAMA7),
    "llama30": ArtifactModel("llama30", 1536, 24, 1024, 4, 1000.0, 6738423808, **_LLAMA7),
})


def _overlap(x: float, y: float, k: float) -> float:
    m = max(x, y)
    if m <= 0:
        return 0.0
    return m * ((x / m) ** k + (y / m) ** k) ** (1.0 / k)


def _dp_family(a: ArtifactModel, plan: ExecutionPlan, counts: Sequence[int], threads: float) -> float:
    g = sum(counts)
    if a.name == "bert":
        f = a.forward_ms / BERT_FORWARD_DIVISORS.get(g, 1.0)
    else:
        f = a.forward_ms / g
    bwd = a.k_bwd * f
    volume = 8.0 * a.ps * (g - 1) / g
    bw = a.b_nvlink if len(counts) == 1 else OFF_NVLINK_DP
    sync = _overlap(volume / bw, bwd, a.k_sync)
    offload = plan.zero is ZeroMode.OFFLOAD
    t_off = 4.0 * a.ps / g / a.b_pcie if offload else 0.0
    o_sync = sync + a.k_off + t_off if offload else sync
    if plan.zero is ZeroMode.NONE:
        t_opt = a.k_opt * a.ps
    elif offload:
        t_opt = a.k_opt_off * a.ps / (g * threads)
    else:
        t_opt = a.k_opt * a.ps / g
    return (2.0 if plan.gc else 1.0) * f + o_sync + (t_opt + a.k_swap + t_off) + a.k_const


def _three_d(a: ArtifactModel, plan: ExecutionPlan, counts: Sequence[int], batch: int) -> float:
    pp, tp, dp_digit = plan.pp, plan.tp, plan.dp
    n, q = len(counts), counts[0]
    d = max(n * q // tp // pp, 1)
    mb = batch // d
    f = a.forward_ms * dp_digit / pp / TP_FORWARD_GAIN ** tp
    bwd = a.k_bwd * f
    sh = a.seq_hid
    t_tp = 32.0 * sh * (tp - 1) * mb * a.layers / tp / MIB / a.b_nvlink
    t_pp = 0.0 if pp == 1 else (16 * mb * sh // tp) / OFF_NVLINK_3D / MIB * pp
    bw = a.b_nvlink if (q > tp and pp == n) else OFF_NVLINK_3D
    t_dp = ((8.0 * (d - 1) / d * a.ps) // tp) / pp / bw
    return f + _overlap(t_dp, bwd, a.k_sync) + a.ps / tp / pp * a.k_opt + a.k_const + t_pp + t_tp


def artifact_iteration_time(model: str, plan: ExecutionPlan, counts: Sequence[int], *,
                            cpu_threads: float | None = None, global_batch: int | None = None) -> float:
    """Seconds per iteration the artifact's model predicts for ``plan`` on ``counts`` (GPUs per machine);
    ``KeyError`` for models it does not have."""
    a = ARTIFACT_MODELS[model]
    counts = [int(c) for c in counts if c]
    if plan.is_3d:
        ms = _three_d(a, plan, counts, int(global_batch or a.local_batch))
    else:
        threads = cpu_threads if cpu_threads else (8.0 if plan.zero is ZeroMode.OFFLOAD else 1.0)
        ms = _dp_family(a, plan, counts, float(threads))
    if not (ms > 0 and math.isfinite(ms)):
        raise ValueError(f"artifact model gave {ms!r} ms for {plan.name} on {counts}")
    return ms / 1000.0


__all__ = ["ARTIFACT_MODELS", "ArtifactModel", "BERT_FORWARD_DIVISORS", "MIB", "OFF_NVLINK_3D",
           "OFF_NVLINK_DP", "TP_FORWARD_GAIN", "artifact_iteration_time"]
