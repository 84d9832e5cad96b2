"""`schedlab simulate` through the real entry point."""

from __future__ import annotations

import csv
import json

import pytest

TIRESIAS = ("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
            "0,1,0,100,vgg19,100,10\n1,4,10,50,vgg11,50,10\n2,60,20,10,alexnet,30,0\n")


def test_trace_json_hand_values(cli, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(TIRESIAS)
    code, out, _ = cli("simulate", "--trace", str(p), "--trace-format", "tiresias", "--semantics", "tiresias",
                       "--policy", "fifo", "--format", "json", "--out", str(tmp_path / "out"), "-q")
    assert code == 0
    m = json.loads(out)["policies"]["fifo"]
    # job 0: 0-100; job 1: 10-60; job 2 (60 GPUs) waits for both: 100-130
    assert m["jobs"] == 3 and m["preemptions"] == 0
    assert m["avg_jct"] == pytest.approx((100 + 50 + 110) / 3)
    assert m["median_jct"] == 100 and m["makespan"] == 130
    assert m["avg_queue"] == pytest.approx(80 / 3)
    for k in ("p95_jct", "p99_jct", "utilization", "bins", "events_per_s"):
        assert k in m
    rows = list(csv.DictReader(open(tmp_path / "out" / "fifo" / "jobs.csv")))
    assert sorted(float(r["end"]) for r in rows) == [60.0, 100.0, 130.0]
    assert json.loads((tmp_path / "out" / "fifo" / "metrics.json").read_text())["jobs"] == 3
    assert (tmp_path / "out" / "fifo" / "series.csv").exists()


def test_workload_text_two_policies(cli):
    code, out, _ = cli("simulate", "--workload", "smoke", "--policy", "fifo", "--policy", "fifo-backfill",
                       "-q")
    assert code == 0 and "fifo-backfill" in out and "avg JCT" in out


def test_philly_vc_and_generic(cli, tmp_path):
    p = tmp_path / "philly.csv"
    p.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:00,60,1,60,a\n"
                 "2017-10-09 07:00:10,30,2,60,b\n")
    code, out, _ = cli("simulate", "--trace", str(p), "--vc", "b", "--format", "json", "-q",
                       "--semantics", "tiresias")
    assert code == 0 and json.loads(out)["policies"]["fifo"]["avg_jct"] == 30.0
    g = tmp_path / "g.csv"
    g.write_text("t,d,n\n0,10,1\n5,20,2\n")
    code, out, _ = cli("simulate", "--trace", str(g), "--trace-format", "generic", "--columns",
                       "submit=t,duration=d,gpus=n", "--cluster", "tiresias-60", "--format", "json", "-q",
                       "--semantics", "tiresias")
    assert code == 0 and json.loads(out)["policies"]["fifo"]["avg_jct"] == 15.0


def test_errors_exit_2(cli, tmp_path):
    code, _, err = cli("simulate", "--workload", "smoke", "--policy", "nope")
    assert code == 2 and "unknown policy 'nope'" in err
    code, _, err = cli("simulate", "--workload", "smoke", "--trace", "x.csv")
    assert code == 2 and "exactly one" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:00,x,1,60,a\n")
    code, _, err = cli("simulate", "--trace", str(bad))
    assert code == 2 and "line 2" in err and "duration" in err
    code, _, err = cli("simulate", "--trace", str(bad), "--lenient", "--format", "json", "-q")
    assert code == 2 and "every one of the 1 rows was bad" in err  # nothing left: an error, not 0 jobs
    bad.write_text(bad.read_text() + "2017-10-09 07:00:10,60,1,60,a\n")
    code, out, _ = cli("simulate", "--trace", str(bad), "--lenient", "--format", "json", "-q")
    assert code == 0 and json.loads(out)["policies"]["fifo"]["skipped_rows"] == 1
