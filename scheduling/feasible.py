"""Whether a job's plan runs on a placement by the verifier's rules (shared by the policies that keep a
user's plan, or scale only its DP degree: Rubick-N/-R, Sia-like).

The rules are exactly the verifier's ``plan`` and ``memory`` checks (:mod:`scheduling.verify`):
``d t p`` = GPUs, every machine's share a multiple of the TP degree, PP dividing the job's layers when
the job gives them, ``d a m`` dividing the job's global batch (the perf model's batch rule: the global
batch never changes and a micro-batch holds whole samples; a data-parallel degree that does not divide
it cannot run, so Sia-like never scales a batch-32 job to 40 GPUs), and the perf model's per-GPU memory
estimate fitting the smallest GPU. The perf model's other search rule (TP dividing the attention heads)
is for plans *it* proposes; a plan the user chose is taken as given.
"""

from __future__ import annotations

from collections.abc import Mapping

from schedlab.perfmodel.memory import plan_memory_violation
from schedlab.perfmodel.plans import ExecutionPlan
from schedlab.perfmodel.search import plan_batch_violation
from schedlab.scheduling.job import Job
from schedlab.topology.cluster import Cluster


def plan_runs(job: Job, plan: ExecutionPlan, counts: Mapping[str, int], cluster: Cluster) -> bool:
    """``plan`` of ``job`` on ``counts`` (``{machine: gpus}``) passes the verifier's plan and memory rules."""
    if plan.gpus != sum(counts.values()) or any(k % plan.tp for k in counts.values()):
        return False
    if job.num_layers is not None and job.num_layers % plan.pp:
        return False
    if plan_batch_violation(job.model, job.global_batch, plan) is not None:
        return False
    gpu_mem = min(cluster.machine(m).gpu_memory_gb for m in counts)
    return plan_memory_violation(job.model, job.global_batch, plan, gpu_mem) is None


__all__ = ["plan_runs"]
