"""``smoke-burst``: the 24-job smoke workload with arrivals four times as dense."""

from schedlab.benchmarks.workloads import WorkloadSpec, get_workload


def smoke_burst(cluster, *, seed=0, load=1.0):
    return get_workload("smoke").build(cluster, seed=seed, load=4.0 * load)


WORKLOADS = [WorkloadSpec("smoke-burst", "tiresias-60", "smoke, 4x denser arrivals", smoke_burst)]
