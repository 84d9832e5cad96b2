"""Suite-wide guard: the layers exist only as ``schedlab.<layer>``. Running from the repository root
puts the bare folders on ``sys.path``; a bare (possibly dynamic) ``import perfmodel`` would load a second
copy of a layer, with its own classes and caches, so it is refused here."""

import importlib.abc
import sys

_BARE = frozenset({"topology", "perfmodel", "scheduling", "formulations", "heuristics", "benchmarks"})


class _RefuseBareLayers(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in _BARE:
            raise ImportError(f"import {fullname!r}: use 'schedlab.{fullname}'")
        return None


sys.meta_path.insert(0, _RefuseBareLayers())
