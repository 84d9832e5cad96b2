"""schedlab example plugin: ``pack-first`` (a formulation), ``largest-first`` (a policy), ``smoke-burst``
(a workload) and the ``example`` suite. ``schedlab --plugin schedlab_example ...`` loads them without
installing; installed, the entry points in ``pyproject.toml`` load them everywhere."""

from schedlab_example.formulation import FORMULATIONS
from schedlab_example.policy import POLICIES
from schedlab_example.suite import SUITES
from schedlab_example.workload import WORKLOADS

__all__ = ["FORMULATIONS", "POLICIES", "SUITES", "WORKLOADS"]
