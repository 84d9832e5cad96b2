"""Imported once by the worker processes' forkserver, so that every run starts with schedlab, the
solvers (each backend's availability check imports its library) and the registered plugins already
loaded: a fork, not an import, per run."""

from schedlab.benchmarks import cli  # noqa: F401 - the console script (__main__ of `schedlab bench`) imports it
from schedlab.benchmarks.harness import gap, replay, worker  # noqa: F401
from schedlab.benchmarks.harness.plugins import entry_point_plugins
from schedlab.benchmarks.registry import all_policies
from schedlab.benchmarks.workloads import WORKLOADS  # noqa: F401
from schedlab.formulations import BACKENDS
from schedlab.perfmodel import facade  # noqa: F401

entry_point_plugins()
all_policies()
for _factory in BACKENDS.values():
    _factory().availability()
