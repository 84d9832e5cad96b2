"""``heuristics.POLICY_HOMES`` (policy name -> family registry, an import string) agrees with the
registries, and ``policies_for`` gives the same specs as ``all_policies`` while importing only the
family of the policies asked for."""

from __future__ import annotations

import subprocess
import sys

from schedlab.benchmarks.merged import all_policies, policies_for
from schedlab.heuristics import FAMILIES, POLICIES, POLICY_HOMES, family_registry


def test_every_heuristic_has_its_home():
    assert set(POLICY_HOMES) == set(POLICIES)
    for name, home in POLICY_HOMES.items():
        assert home in FAMILIES
        assert family_registry(home)[name] is POLICIES[name]
    assert list(POLICIES) == [n for h in FAMILIES for n in family_registry(h)]


def test_policies_for_gives_the_same_specs():
    full = all_policies()
    for name in POLICY_HOMES:
        assert policies_for([name])[name] == full[name]
    assert set(policies_for(["fifo", "exact-joint"])) == set(full)  # a formulation-side policy: all of them
    assert set(policies_for(["no-such-policy"])) == set(full)       # the unknown name's error lists them all


def test_one_policy_imports_its_family_only():
    code = ("import sys; from schedlab.benchmarks.merged import policies_for; policies_for(['fifo']).build('fifo'); "
            "print(sorted(m for m in sys.modules if m.startswith(('schedlab.formulations', 'schedlab.heuristics.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "schedlab.formulations" not in out and "schedlab.heuristics.rubick" not in out, out
    assert "schedlab.heuristics.fifo" in out
