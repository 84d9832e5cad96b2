"""Imported once by the worker launcher (:mod:`~schedlab.benchmarks.harness.launcher`), so that every
run starts with schedlab, the solvers (each backend's availability check imports its library) and the
registered plugins (entry points, ``SCHEDLAB_PLUGINS``) already loaded: a fork, not an import, per run."""

from schedlab.benchmarks.harness import bound, gap, replay, worker  # noqa: F401
from schedlab.benchmarks.harness.plugins import load_plugins
from schedlab.benchmarks.merged import all_policies
from schedlab.benchmarks.workloads import WORKLOADS  # noqa: F401
from schedlab.formulations import BACKENDS
from schedlab.perfmodel import facade  # noqa: F401

load_plugins()
all_policies()
for _factory in BACKENDS.values():
    _factory().availability()
