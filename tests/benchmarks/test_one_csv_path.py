"""The three CSV readers (traces, cluster-spec tables, perf-model samples) are one path
(``topology.tables.read_table``): the same encodings decode, the same bad files fail cleanly with the
file named, and lines are kept for errors."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.workloads import load_trace
from schedlab.perfmodel.validation import read_table as read_placements
from schedlab.topology.errors import SchedlabError, SpecError
from schedlab.topology.loaders import spec_from_pai_machines, spec_from_tiresias_csv
from schedlab.topology.tables import read_table

SPEC = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n2,4,8,32,256\n"
PLACEMENTS = "exec_plan,placement,iter_time\nzero-dp,8,1.5\nga,44,2.0\n"


@pytest.mark.parametrize("enc", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
def test_every_reader_decodes_the_same_encodings(tmp_path, enc):
    p = tmp_path / "spec.csv"
    p.write_bytes(SPEC.encode(enc))
    spec = spec_from_tiresias_csv(p)
    assert len(spec.machines) == 8
    q = tmp_path / "pl.csv"
    q.write_bytes(PLACEMENTS.encode(enc))
    assert [(r.line, r.plan_name, r.iter_time) for r in read_placements(q)] == [(2, "zero-dp", 1.5), (3, "ga", 2.0)]
    t = tmp_path / "t.csv"
    t.write_bytes("t,d,g\n0,60,1\n".encode(enc))
    assert load_trace(t, mapping="submit=t,duration=d,gpus=g").jobs[0].duration == 60.0


@pytest.mark.parametrize("data,needle", [(b"", "empty"), (b"\x00\x01PK\x03\x04" * 8, "binary"),
                                          ("a,b\n1,2\n".encode("utf-16-le"), "UTF-16"),
                                          (b"a,b,c,d,e\n1,2,3\n1,2,3,4,5,6\n", "line 3")])
def test_every_reader_fails_cleanly(tmp_path, data, needle):
    p = tmp_path / "x.csv"
    p.write_bytes(data)
    for read in (spec_from_tiresias_csv, read_placements, spec_from_pai_machines,
                 lambda f: load_trace(f, mapping="submit=a,gpus=b,duration=c")):
        with pytest.raises(SchedlabError) as ei:
            read(p)
        assert needle in str(ei.value) and str(p) in str(ei.value), (read, str(ei.value))


def test_lines_kept_past_blank_lines_and_quoted_newlines(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('id,note,n\n\na,"two\nlines",1\n\nb,x,oops\n')
    t = read_table(p)
    assert t.lines.tolist() == [3, 6] and t.columns == ("id", "note", "n")
    with pytest.raises(SpecError) as ei:
        spec_from_tiresias_csv(p)
    assert "missing column" in str(ei.value)
    with pytest.raises(SchedlabError) as ei:
        load_trace(p, mapping="id=id,submit=n,gpus=n,duration=n")
    assert (ei.value.line, ei.value.column) == (3, "n") or ei.value.line == 6
