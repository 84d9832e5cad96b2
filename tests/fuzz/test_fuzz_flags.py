"""Fuzz the numeric flags of the CLI: every value outside the flag's range (NaN, infinities, huge,
negative, fractions where integers go, text, odd Unicode) is refused at parse time with one ``error:``
line naming the flag; values inside it are accepted. Each case ends in a deliberate later error (an
unknown cluster, model or file), so a run costs milliseconds and shows that the flag was checked
before anything ran."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
from fuzz.strategies import assert_clean_cli, error_lines, flag_strings, fuzz, run_cli
from hypothesis import given
from hypothesis import strategies as st

from schedlab.benchmarks.cli.options import SEED_MAX


@dataclass(frozen=True)
class FlagCase:
    argv: tuple[str, ...]  # a command that fails later, after option parsing, when the flag is valid
    flag: str
    kind: type             # int or float
    lo: float
    hi: float
    lo_open: bool = False

    def valid(self, text: str) -> bool | None:
        """True/False when ``text`` is plainly in/out of range; None for spellings a parser may read
        either way ("1_000", " 1", "+1", non-ASCII digits)."""
        try:
            v = self.kind(text)
        except (ValueError, OverflowError):
            if self.kind is int:  # "4.0" may be read as the integer 4; "4.5" never
                try:
                    f = float(text)
                except ValueError:
                    return False
                if math.isfinite(f) and f.is_integer():
                    return None if self.lo <= f <= self.hi else False
            return False
        if isinstance(v, float) and not math.isfinite(v):
            return False
        inside = (self.lo < v if self.lo_open else self.lo <= v) and v <= self.hi
        canonical = text == (str(v) if self.kind is int else repr(v)) or text == str(int(v) if v == int(v) else v)
        if not inside:
            return False
        return True if canonical else None


SIM = ("simulate", "-w", "smoke", "-q", "--cluster", "no-such-cluster")
CURVE = ("perf", "curve", "no-such-model")
CASES = [
    FlagCase(SIM, "--seed", int, 0, SEED_MAX),
    FlagCase(SIM, "--load", float, 0, 1e6, lo_open=True),
    FlagCase(SIM, "--large-share", float, 0, 1),
    FlagCase(CURVE, "--max", int, 1, 64),                     # rubick-64 (the default cluster) has 64 GPUs
    FlagCase(CURVE + ("--resource", "cpu"), "--gpus", int, 1, 64),
    FlagCase(CURVE, "--cpus", int, 1, 768),                   # ... and 768 CPUs
    FlagCase(("perf", "fit", "no-such-samples.csv"), "--seed", int, 0, SEED_MAX),
    FlagCase(("perf", "validate", "--dir", "no-such-dir"), "--fit-rows", int, 7, 64),
]


@fuzz(100)
@given(case=st.sampled_from(CASES), value=flag_strings())
def test_numeric_flags(case, value):
    argv = case.argv + (case.flag, value)
    code, out, err = run_cli(*argv, budget=30)
    assert_clean_cli(code, out, err, argv=argv)
    assert code == 2, "every case ends in a later error"
    (line,) = error_lines(err)
    refused_for_flag = case.flag in line
    expect = case.valid(value)
    if expect is False:
        assert refused_for_flag, f"{argv}: {value!r} is out of range but the error is {line!r}"
    elif expect is True:
        assert not refused_for_flag, f"{argv}: {value!r} is in range but was refused: {line!r}"


@pytest.mark.parametrize("argv", [
    [b"topology", b"\xff\xfe.yaml"],
    [b"simulate", b"-w", b"smoke", b"--seed", b"\xff"],
    [b"topology", b"rubick-64", b"--graphml", b"/nonexistent-\xff/x.graphml"],
    [b"perf", b"curve", b"vit", b"--max", b"nan"],
], ids=["spec-name", "seed-bytes", "graphml-folder", "max-nan"])
def test_undecodable_argv_through_the_console_script(argv):
    """The real entry point in a fresh process (undecodable argv bytes, a real UTF-8 stderr): exit 2,
    one error line, no traceback."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", LC_ALL="C.UTF-8")
    r = subprocess.run([sys.executable, "-m", "schedlab", *argv], capture_output=True, env=env, timeout=120)
    err = r.stderr.decode("utf-8", "replace")
    assert_clean_cli(r.returncode, r.stdout.decode("utf-8", "replace"), err, argv=tuple(argv))
    assert r.returncode == 2
