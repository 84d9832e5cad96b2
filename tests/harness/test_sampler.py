"""StateSampler: states captured from a replay load back equal and replay the policy's decision."""

from __future__ import annotations

import json

import pytest

from schedlab.benchmarks.harness.horizon_score import policy_by_name
from schedlab.benchmarks.harness.sampler import (
    StateSampler,
    load_state,
    load_states,
    replay_matches,
    save_state,
    save_states,
)
from schedlab.formulations import load_instance
from schedlab.formulations.io import instance_to_dict
from schedlab.scheduling import Job, Resources, validate_allocation
from schedlab.topology.cluster import Cluster
from schedlab.topology.errors import SpecError
from schedlab.topology.loaders import spec_from_dict


def cluster() -> Cluster:
    return Cluster(spec_from_dict({"name": "s", "defaults": {"gpus": 4, "gpu_model": "X-80GB", "gpu_memory_gb": 80,
                                                             "cpus": 16, "host_memory_gb": 256},
                                   "links": {"machine": {"bandwidth_gbps": 100}, "rack": {"bandwidth_gbps": 10}},
                                   "racks": 1, "machines_per_rack": 2}))


def workload() -> list[Job]:
    """12 resnet50 jobs of 1-4 GPUs arriving every 30 s on 8 GPUs: queues form."""
    return [Job(f"w{i:02d}", Resources([1, 2, 4, 3][i % 4], 2, 8.0), iterations=2000.0 + 500 * i, arrival=30.0 * i,
                model="resnet50", global_batch=96) for i in range(12)]  # 96: every size splits it


def test_sample_is_seeded_uniform_and_records_its_origin():
    a = StateSampler(3, seed=1).sample(cluster(), workload(), policy_by_name("fifo"), workload="toy-12")
    b = StateSampler(3, seed=1).sample(cluster(), workload(), policy_by_name("fifo"), workload="toy-12")
    c = StateSampler(3, seed=2).sample(cluster(), workload(), policy_by_name("fifo"), workload="toy-12")
    assert len(a) == 3 and [s.origin.decision_index for s in a] == [s.origin.decision_index for s in b]
    assert a[0].origin.decision_points > 3  # a sample, not the first three
    assert len(c) == 3 and all(s.origin.sample_seed == 2 for s in c)
    for s in a:
        assert s.origin.workload == "toy-12" and s.origin.policy == "fifo" and s.origin.sample_seed == 1
        assert s.instance.time == s.origin.time and "toy-12 under fifo" in s.origin.label()
        assert any(j.id not in s.instance.current for j in s.instance.jobs)  # at least one queued job
        assert validate_allocation(s.instance, s.decided) == []
    with pytest.raises(SpecError):
        StateSampler(0)


def test_sampled_states_round_trip_and_replay(tmp_path):
    states = StateSampler(4, seed=0).sample(cluster(), workload(), policy_by_name("fifo"), workload="toy-12",
                                            params={}, replay_seed=0)
    paths = save_states(states, tmp_path)
    assert len(paths) == 4
    back = load_states(tmp_path)
    for s, t in zip(states, back, strict=True):
        assert instance_to_dict(t.instance) == instance_to_dict(s.instance)
        assert t.decided == s.decided and t.origin == s.origin and t.frozen == s.frozen
        # FIFO is stateless: a fresh FIFO decides on the loaded state exactly what it decided in the replay
        assert replay_matches(t, policy_by_name("fifo"))
    assert any(s.decided != s.instance.current for s in states)  # the replayed decisions start jobs
    assert load_state(paths[0]).origin.decision_index == states[0].origin.decision_index
    assert json.loads(paths[0].read_text())["kind"] == "sampled-state"
    # a progress-reading policy on the same states: the states carry progress, so 2D-LAS can decide on them
    for s in back:
        alloc = policy_by_name("2d-las").decide(s.instance)
        assert validate_allocation(s.instance, alloc) == []


def test_load_state_checks_its_tag_and_names_the_file(tmp_path):
    """A sampled state is not a formulation kind: the registry refuses it, load_state refuses anything else."""
    s = StateSampler(1, seed=0).sample(cluster(), workload(), policy_by_name("fifo"), workload="toy-12")[0]
    p = tmp_path / "state-000001.json"
    save_state(s, p)
    with pytest.raises(SpecError, match="unknown instance kind 'sampled-state'"):
        load_instance(p)
    d = json.loads(p.read_text())
    for tag in ("joint", None):
        q = tmp_path / f"state-{tag}.json"
        q.write_text(json.dumps({**d, "kind": tag}))
        with pytest.raises(SpecError, match="not a sampled state") as e:
            load_state(q)
        assert str(q) in str(e.value)
    q = tmp_path / "broken-000001.json"
    q.write_text(json.dumps({k: v for k, v in d.items() if k != "origin"}))
    with pytest.raises(SpecError, match="malformed sampled state") as e:
        load_states(tmp_path, "broken")
    assert str(q) in str(e.value)


@pytest.mark.parametrize(("policy", "semantics"), [("dally", "realistic"), ("rubick", "realistic"),
                                                   ("2d-las", "tiresias")])
def test_states_of_other_families_round_trip(tmp_path, policy, semantics):
    """Stateful policies and the pooled Tiresias semantics: states load back equal and the replay's
    decision is a valid allocation of the state (whether a fresh policy repeats it is not asserted)."""
    from dataclasses import replace

    jobs = [replace(j, duration=600.0 + 100 * i) for i, j in enumerate(workload())]
    states = StateSampler(2, seed=3).sample(cluster(), jobs, policy_by_name(policy), workload="toy-12",
                                            semantics=semantics)
    assert len(states) == 2 and all(s.origin.semantics == semantics for s in states)
    save_states(states, tmp_path)
    for s, t in zip(states, load_states(tmp_path), strict=True):
        assert instance_to_dict(t.instance) == instance_to_dict(s.instance)
        assert validate_allocation(t.instance, t.decided) == []
