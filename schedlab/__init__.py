"""schedlab: optimization-based scheduling of deep-learning training jobs on GPU clusters.

The distribution installs six layers under this namespace (the folders stay at the repository's top
level and are mapped here by ``pyproject.toml``): ``schedlab.topology`` <- ``schedlab.perfmodel`` <-
``schedlab.scheduling`` <- (``schedlab.formulations``, ``schedlab.heuristics``) <- ``schedlab.benchmarks``.
"""



def __getattr__(name: str) -> str:
    """``schedlab.__version__``, read from the installed metadata on first use (importlib.metadata is
    slow to import, and every ``schedlab`` command imports this package)."""
    if name != "__version__":
        raise AttributeError(f"module 'schedlab' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("schedlab")
    except PackageNotFoundError:  # running from a source tree that is not installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value


__all__ = ["__version__"]
