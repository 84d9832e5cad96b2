"""Per-job records with --out: requested, trace and granted GPUs, run.json (parameters, seed),
assumptions.json, parquet; and the docs' walkthrough from an unknown CSV to a JCT table, run as written."""

from __future__ import annotations

import csv
import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN = ROOT / "examples" / "traces" / "unknown.csv"
COLUMNS = ("submit=submission_time,duration=duration,gpus=num_gpu,id=job_id,model=model_name,"
           "iterations=num_iteration,batch=batch_size")


def test_out_records_carry_gpus_parameters_seed_and_assumptions(cli, tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("t,d,g\n0,100,2000\n10,50,2\n")  # 2,000 GPUs on tiresias-60: resized to 60
    out = tmp_path / "runs"
    code, _, err = cli("simulate", "--trace", t, "--columns", "submit=t,duration=d,gpus=g", "--cluster", "tiresias-60",
                       "-p", "fifo", "-p", "fifo-backfill", "--seed", "3", "--out", out, "-q")
    assert code == 0, err
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 3 and run["cluster"] == "tiresias-60" and run["setting"]["format"] == "generic"
    assert run["policies"] == {"fifo": {"blocking": True}, "fifo-backfill": {"blocking": False}}
    assert run["source"]["columns"] == "submit=t,duration=d,gpus=g" and run["jobs"] == 2
    a = json.loads((out / "assumptions.json").read_text())
    kinds = {x["kind"]: x for x in a["assumptions"]}
    assert kinds["gpus-resized"]["examples"][0] == {"job": "job-2", "line": 2, "field": "gpus",
                                                    "detail": "2000 -> 60"}
    for p in ("fifo", "fifo-backfill"):
        rows = {r["job_id"]: r for r in csv.DictReader(open(out / p / "jobs.csv"))}
        big = rows["job-2"]
        assert (big["gpus"], big["trace_gpus"], float(big["granted_gpus"])) == ("60", "2000", 60.0)
        assert float(big["jct"]) == pytest.approx(100 * 2000 / 60)
        assert json.loads((out / p / "metrics.json").read_text())["seed"] == 3


def test_parquet_records_and_a_clear_error_without_pyarrow(cli, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "pq"
    code, _, err = cli("simulate", "--workload", "smoke", "--out", out, "--out-format", "parquet", "-q")
    assert code == 0, err
    table = pq.read_table(out / "fifo" / "jobs.parquet")
    assert table.num_rows == 24 and {"trace_gpus", "granted_gpus", "jct"} <= set(table.column_names)
    assert pq.read_table(out / "fifo" / "series.parquet").num_rows > 0
    assert not (out / "fifo" / "jobs.csv").exists()
    from schedlab.benchmarks.simulator import records

    monkeypatch.setattr(records, "parquet_available", lambda: False)
    code, out_text, err = cli("simulate", "--workload", "smoke", "--out", tmp_path / "x", "--out-format", "parquet",
                              "-q")
    assert code == 2 and "pip install 'schedlab[parquet]'" in err and not out_text
    assert not (tmp_path / "x").exists()  # refused before anything ran


def _doc() -> str:
    return (ROOT / "docs" / "workloads.md").read_text()


def test_docs_walkthrough_runs_as_written(cli, tmp_path, monkeypatch):
    doc = _doc()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples" / "traces").mkdir(parents=True)
    (tmp_path / "examples" / "traces" / "unknown.csv").write_bytes(UNKNOWN.read_bytes())
    # 1. the error shows the --columns line the docs paste in the next steps
    code, _, err = cli("simulate", "--trace", "examples/traces/unknown.csv", "-q")
    assert code == 2 and f"--columns {COLUMNS}" in err and f"--columns {COLUMNS}" in doc
    # 2. stats
    code, out, _ = cli("workload", "stats", "examples/traces/unknown.csv", "--columns", COLUMNS)
    assert code == 0 and "cluster for load 70%: 6 machines x 8 GPUs = 48 GPUs" in out
    assert "peak 82, mean 29.8, P95 72 GPUs" in out and "peak 82, mean 29.8, P95 72 GPUs" in doc
    # 3. the replay (the command as the docs print it)
    cmd = re.search(r"\$ (schedlab simulate --trace examples/traces/unknown.csv --columns .*?--out runs/mine)\n",
                    doc.replace("\\\n    ", ""), re.S).group(1)
    code, out, err = cli(*shlex.split(cmd)[1:], "-q")
    assert code == 0, err
    for line in ("workload generic: 24 jobs on auto-48 (48 GPUs)", "3 x model 'deepspeech2' cannot be served",
                 "fifo           avg JCT 1.22 h  median 1.07 h", "fifo-backfill  avg JCT 1.11 h  median 0.58 h"):
        assert line in out and line in doc
    # 4. the five lines of pandas, as written
    block = re.search(r"```python\n(import pandas as pd\n.*?)```", doc, re.S).group(1)
    assert len(block.strip().splitlines()) == 6  # the import + five lines
    printed: list[str] = []
    exec(compile(block, "docs/workloads.md", "exec"), {"print": lambda x: printed.append(str(x))})
    table = printed[0]
    assert "fifo-backfill" in table and "4009.7" in table and "4398.2" in table
    assert "4398.2  3841.5" in doc
