"""Speed work keeps every replay's records byte-identical: quick workloads and 2,000-job Philly
windows replayed under the tuned policies give the digests main's code gave (``replay_digests.json``)."""

import json

import pytest
from golden import replay_identity as ri

GOLDEN = json.loads(ri.GOLDEN.read_text())


@pytest.fixture(scope="module")
def cache():
    return {}


def test_every_case_has_a_golden_digest():
    assert set(ri.cases()) == set(GOLDEN)


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if ri.slow(c) else c for c in ri.cases()])
def test_replay_records_unchanged(case, cache, tmp_path_factory):
    got = ri.digest(case, tmp_path_factory.getbasetemp(), cache)
    if got is None:
        pytest.skip("Philly trace not found")
    assert got == GOLDEN[case]
