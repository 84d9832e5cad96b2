"""JSON (de)serialisation of the vocabulary the formulation instances carry: clusters, jobs,
resources, plans, allocations and scheduling instances. Every instance type of this package has
``to_dict`` / ``from_dict``; ``formulations.load_instance`` / ``save_instance`` (the kind registry,
:class:`~formulations.kinds.KindRegistry`) add a ``kind`` tag."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedlab.perfmodel.plans import parse_plan
from schedlab.scheduling.allocation import Allocation, JobAllocation
from schedlab.scheduling.instance import Instance, JobProgress
from schedlab.scheduling.job import Job, JobClass
from schedlab.scheduling.resources import Resources
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.presets import PRESETS, preset
from schedlab.topology.tiers import Tier


def cluster_to_dict(c: Cluster) -> dict[str, Any]:
    """A preset by name when ``c`` is one, else an explicit spec (uniform links assumed)."""
    if c.name in PRESETS and c.name != "pai-2020":
        return {"preset": c.name}
    ms = c.spec.machines
    m0 = ms[0]
    links: dict[str, Any] = {
        "machine": {"bandwidth_gbps": m0.intra.bandwidth_gbps, "latency_us": m0.intra.latency_us},
        "rack": {"bandwidth_gbps": m0.uplink.bandwidth_gbps, "latency_us": m0.uplink.latency_us}}
    ups = list(c.spec.rack_uplinks.values())
    if ups and all(u.bandwidth_gbps != float("inf") for u in ups):
        links["network"] = {"bandwidth_gbps": ups[0].bandwidth_gbps, "latency_us": ups[0].latency_us}
    racks = []
    for r in c.racks:
        racks.append({"name": r, "machines": [
            {"name": m.name, "gpus": m.gpus, "gpu_model": m.gpu_model, "gpu_memory_gb": m.gpu_memory_gb,
             "cpus": m.cpus, "host_memory_gb": m.host_memory_gb, "pcie_gbps": m.pcie_gbps}
            for m in ms if m.rack == r]})
    return {"spec": {"name": c.name, "links": links, "racks": racks}}


def cluster_from_dict(d: Mapping[str, Any], source: str = "<instance>") -> Cluster:
    if "preset" in d:
        return preset(d["preset"])
    if "spec" in d:
        from schedlab.topology.loaders import spec_from_dict  # pydantic models: not at `schedlab list` time

        return Cluster(spec_from_dict(d["spec"], source=source))
    raise SpecError("cluster needs 'preset' or 'spec'", source=source, field="cluster")


def res_to(r: Resources) -> list[float]:
    return [r.gpus, r.cpus, r.mem_gb]


def res_from(v) -> Resources:
    """``[gpus, cpus, mem_gb]`` -> :class:`Resources` (validated there: no truncation, no booleans)."""
    if not isinstance(v, (list, tuple)) or len(v) != 3:
        raise SpecError(f"resources must be [gpus, cpus, mem_gb], got {v!r}"[:200], source="<instance>",
                        field="resources")
    return Resources(*v)


def job_to_dict(j: Job) -> dict[str, Any]:
    return {"id": j.id, "requested": res_to(j.requested), "iterations": j.iterations, "arrival": j.arrival,
            "model": j.model, "tenant": j.tenant, "plan": None if j.plan is None else j.plan.canonical(),
            "job_class": j.job_class.value, "reconfigurable": j.reconfigurable,
            "max_tier": None if j.max_tier is None else j.max_tier.label,
            "min_resources": None if j.min_resources is None else res_to(j.min_resources),
            "global_batch": j.global_batch, "num_layers": j.num_layers, "duration": j.duration,
            "priority": j.priority, "attrs": dict(j.attrs)}


def job_from_dict(d: Mapping[str, Any]) -> Job:
    return Job(id=d["id"], requested=res_from(d["requested"]), iterations=d.get("iterations", 1.0),
               arrival=d.get("arrival", 0.0), model=d.get("model", "unknown"), tenant=d.get("tenant", "default"),
               plan=None if d.get("plan") is None else parse_plan(d["plan"]),
               job_class=JobClass(d.get("job_class", "best-effort")), reconfigurable=d.get("reconfigurable", False),
               max_tier=None if d.get("max_tier") is None else Tier.parse(d["max_tier"]),
               min_resources=None if d.get("min_resources") is None else res_from(d["min_resources"]),
               global_batch=d.get("global_batch"), num_layers=d.get("num_layers"), duration=d.get("duration"),
               priority=d.get("priority", 0.0), attrs=d.get("attrs", {}))


def allocation_to_dict(a: Allocation) -> dict[str, Any]:
    return {ja.job_id: {"plan": ja.plan.canonical(), "placement": {m: res_to(r) for m, r in ja.placement.items()}}
            for ja in a}


def allocation_from_dict(d: Mapping[str, Any]) -> Allocation:
    return Allocation.of(JobAllocation(j, parse_plan(v["plan"]), {m: res_from(r) for m, r in v["placement"].items()})
                         for j, v in d.items())


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    return {"cluster": cluster_to_dict(inst.cluster), "jobs": [job_to_dict(j) for j in inst.jobs],
            "current": allocation_to_dict(inst.current), "quotas": {t: res_to(q) for t, q in inst.quotas.items()},
            "reserved": {m: res_to(r) for m, r in inst.reserved.items()}, "time": inst.time,
            **({"progress": {j: p.as_dict() for j, p in inst.progress.items()}} if inst.progress else {})}


def instance_from_dict(d: Mapping[str, Any], source: str = "<instance>") -> Instance:
    return Instance(cluster=cluster_from_dict(d["cluster"], source), jobs=tuple(job_from_dict(j) for j in d["jobs"]),
                    current=allocation_from_dict(d.get("current", {})),
                    quotas={t: res_from(q) for t, q in d.get("quotas", {}).items()},
                    reserved={m: res_from(r) for m, r in d.get("reserved", {}).items()}, time=d.get("time", 0.0),
                    progress={j: JobProgress(**p) for j, p in d.get("progress", {}).items()})


__all__ = ["allocation_from_dict", "allocation_to_dict", "cluster_from_dict", "cluster_to_dict",
           "instance_from_dict", "instance_to_dict", "job_from_dict", "job_to_dict", "res_from", "res_to"]
