"""schedlab: optimization-based scheduling of deep-learning training jobs on GPU clusters.

The distribution installs six layers under this namespace (the folders stay at the repository's top
level and are mapped here by ``pyproject.toml``): ``schedlab.topology`` <- ``schedlab.perfmodel`` <-
``schedlab.scheduling`` <- (``schedlab.formulations``, ``schedlab.heuristics``) <- ``schedlab.benchmarks``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("schedlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
