"""Baseline policies the papers compare against (one module each; each registers its own family
registry, merged in ``heuristics/__init__.py``)."""
