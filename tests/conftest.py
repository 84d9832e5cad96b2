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


import pytest  # noqa: E402


class CliResult:
    """What one ``schedlab`` invocation gave: exit ``code``, ``out`` (stdout), ``err`` (stderr)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __iter__(self):  # ``code, out, err = cli(...)``
        return iter((self.code, self.out, self.err))

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, out={self.out[-300:]!r}, err={self.err[-300:]!r})"


@pytest.fixture
def cli(capsys):
    """Run ``schedlab ARGS...`` through the real entry point (standalone mode, exit codes kept)."""
    from schedlab.benchmarks.cli import main

    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        code = 0
        try:
            main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return run


@pytest.fixture(scope="session")
def traces_dir():
    """``../shared/traces`` beside the repository (CI has it; the package never needs it). Tests that
    read public traces skip, saying so, where it is absent."""
    from pathlib import Path

    d = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
    if not d.is_dir():
        pytest.skip(f"public traces not found at {d}")
    return d
