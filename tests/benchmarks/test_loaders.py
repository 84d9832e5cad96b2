"""Trace loaders on small files written here, one per schema, including bad input."""

from __future__ import annotations

import pytest

from schedlab.benchmarks.workloads import LOADERS, load_trace, parse_mapping
from schedlab.topology.errors import SchedlabError, TraceError


def write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return p


PHILLY = """timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 07:01:55,66.0,1,66.0,vcA
2017-10-09 06:13:03,2951.0,2,5902.0,vcB
2017-10-10 06:13:03,100.0,8,800.0,vcA
"""


def test_philly_sorted_relative_and_tenant(tmp_path):
    tr = load_trace(write(tmp_path, "p.csv", PHILLY), "philly")
    assert [j.line for j in tr.jobs] == [3, 2, 4]  # sorted by submit time
    # 06:13:03 is t=0; 07:01:55 is 48 min 52 s later; next day + 24 h
    assert [j.submit for j in tr.jobs] == [0.0, 2932.0, 86400.0]
    assert [j.gpus for j in tr.jobs] == [2, 1, 8]
    assert [j.duration for j in tr.jobs] == [2951.0, 66.0, 100.0]
    assert [j.tenant for j in tr.jobs] == ["vcB", "vcA", "vcA"]


def test_philly_vc_and_dates(tmp_path):
    p = write(tmp_path, "p.csv", PHILLY)
    tr = load_trace(p, "philly", vc="vcA")
    assert [j.gpus for j in tr.jobs] == [1, 8] and tr.filtered == 1
    assert tr.jobs[0].submit == 0.0 and tr.jobs[1].submit == 86400.0 - 2932.0
    tr = load_trace(p, "philly", start="2017-10-09", end="2017-10-10")
    assert [j.gpus for j in tr.jobs] == [2, 1]
    assert tr.filtered == 1


@pytest.mark.parametrize("bad,column", [
    ("2017-10-09 07:01:55,abc,1,66.0,vcA", "duration"),
    ("2017-10-09 07:01:55,-5,1,66.0,vcA", "duration"),
    ("2017-10-09 07:01:55,5,0,66.0,vcA", "num_gpus"),
    ("2017-10-09 07:01:55,5,1.5,66.0,vcA", "num_gpus"),
    ("yesterday,5,1,66.0,vcA", "timestamp"),
    ("2017-10-09 07:01:55,5,1,66.0,", "cluster"),
])
def test_philly_bad_rows_name_file_line_column(tmp_path, bad, column):
    p = write(tmp_path, "bad.csv", PHILLY + bad + "\n")
    with pytest.raises(TraceError) as ei:
        load_trace(p, "philly")
    e = ei.value
    assert e.source == str(p) and e.line == 5 and e.column == column
    assert str(p) in str(e) and "line 5" in str(e) and column in str(e)
    tr = load_trace(p, "philly", lenient=True)
    assert len(tr) == 3 and tr.skipped == 1 and len(tr.errors) == 1


def test_wrong_field_count_and_missing_column(tmp_path):
    p = write(tmp_path, "short.csv", PHILLY + "2017-10-09 07:01:55,5\n")
    with pytest.raises(TraceError, match="line 5"):
        load_trace(p, "philly")
    assert load_trace(p, "philly", lenient=True).skipped == 1
    p2 = write(tmp_path, "nocol.csv", "timestamp,duration,cluster\n2017-10-09 07:01:55,5,a\n")
    with pytest.raises(TraceError) as ei:
        load_trace(p2, "philly")
    assert ei.value.line == 1 and ei.value.column == "num_gpus"
    with pytest.raises(SchedlabError, match="trace not found"):
        load_trace(tmp_path / "absent.csv", "philly")
    with pytest.raises(TraceError, match="unknown trace format"):
        load_trace(p, "nope")


def test_tiresias(tmp_path):
    p = write(tmp_path, "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                                 "0,1,10,606,vgg19,164,30\n1,8,40,133,vgg11,147,23\n")
    tr = load_trace(p, "tiresias")
    assert [(j.id, j.gpus, j.submit, j.iterations, j.model, j.duration) for j in tr.jobs] == [
        ("0", 1, 0.0, 606.0, "vgg19", 164.0), ("1", 8, 30.0, 133.0, "vgg11", 147.0)]
    bad = write(tmp_path, "tb.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                                    "0,1,10,zero,vgg19,164,30\n")
    with pytest.raises(TraceError) as ei:
        load_trace(bad, "tiresias")
    assert (ei.value.line, ei.value.column) == (2, "iterations")


RUBICK = ("name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,exec_plan,steps,is_sla\n"
          "vit-0,0,3163.1,vit,2,16,0,zero-dp,37239,1\n"
          "llama30-1,1639,142.2,llama30,48,384,1.25,344,64,0\n")


def test_rubick(tmp_path):
    tr = load_trace(write(tmp_path, "r.csv", RUBICK), "rubick")
    a, b = tr.jobs
    assert (a.id, a.gpus, a.cpus, a.plan, a.iterations, a.guaranteed, a.tenant) == \
        ("vit-0", 2, 16, "zero-dp", 37239.0, True, "A")
    assert (b.submit, b.gpus, b.plan, b.guaranteed, b.tenant, b.attrs["bandwidth"]) == \
        (1639.0, 48, "344", False, "B", 1.25)


def test_rubick_plan_must_match_gpus(tmp_path):
    p = write(tmp_path, "r.csv", RUBICK.replace("llama30,48,384,1.25,344", "llama30,40,384,1.25,344"))
    with pytest.raises(TraceError) as ei:
        load_trace(p, "rubick")
    assert (ei.value.line, ei.value.column) == (3, "exec_plan")


def test_pollux(tmp_path):
    p = write(tmp_path, "w.csv", "name,time,application,num_replicas,batch_size\n"
                                 "cifar10-0,107,cifar10,6,2048\ndeepspeech2-1,110,deepspeech2,6,320\n")
    tr = load_trace(p, "pollux")
    assert [(j.submit, j.gpus, j.model, j.batch_size, j.duration) for j in tr.jobs] == [
        (0.0, 6, "cifar10", 2048, None), (3.0, 6, "deepspeech2", 320, None)]
    assert load_trace(p, "sia", default_duration=600.0).jobs[0].duration == 600.0


HELIOS = ("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
          "j1,u1,vc1,8,48,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:20,2020-04-01 01:00:20,3600,10\n"
          "j2,u2,vc2,0,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:01:00,60,0\n"
          "j3,u1,vc2,2,8,1,FAILED,2020-04-01 00:01:10,2020-04-01 00:01:10,2020-04-01 00:02:10,60,0\n")


def test_helios_filters_cpu_jobs_vc_and_states(tmp_path):
    p = write(tmp_path, "cluster_log.csv", HELIOS)
    tr = load_trace(p, "helios")
    assert [(j.id, j.submit, j.gpus, j.cpus, j.tenant) for j in tr.jobs] == [
        ("j1", 0.0, 8, 48, "vc1"), ("j3", 60.0, 2, 8, "vc2")]
    assert tr.filtered == 1
    assert [j.id for j in load_trace(p, "helios", vc="vc2").jobs] == ["j3"]
    assert [j.id for j in load_trace(p, "helios", states=("COMPLETED",)).jobs] == ["j1"]
    bad = write(tmp_path, "b.csv", HELIOS.replace(",3600,10", ",-1,10"))
    with pytest.raises(TraceError) as ei:
        load_trace(bad, "helios")
    assert (ei.value.line, ei.value.column) == (2, "duration")


def test_pai_join(tmp_path):
    write(tmp_path, "pai_task_table.csv",
          "jobA,worker,2,Terminated,100,400,600,29.3,50,V100\n"
          "jobA,ps,1,Terminated,100,400,200,10,100,V100\n"
          "jobB,worker,1,Terminated,200,300,400,8,,MISC\n"      # no GPU: filtered
          "jobC,worker,3,Terminated,50,80,100,4,25,T4\n")
    jobs = write(tmp_path, "pai_job_table.csv",
                 "jobA,i1,alice,Terminated,100,400\n"
                 "jobB,i2,bob,Terminated,200,300\n"
                 "jobC,i3,carol,Terminated,50,80\n"
                 "jobD,i4,dave,Failed,60,90\n")
    tr = load_trace(jobs, "pai")
    # jobA: GPUs ceil(2*0.5 + 1*1.0) = 2, CPUs ceil(2*6 + 1*2) = 14, mem 2*29.3 + 10 = 68.6
    # jobC: GPUs ceil(3*0.25) = 1; submit 50 -> t=0, jobA 100 -> t=50
    assert [(j.id, j.submit, j.gpus, j.cpus, j.duration, j.tenant) for j in tr.jobs] == [
        ("jobC", 0.0, 1, 3, 30.0, "carol"), ("jobA", 50.0, 2, 14, 300.0, "alice")]
    assert tr.jobs[1].mem_gb == pytest.approx(68.6)
    assert tr.jobs[1].attrs["gpu_type"] == "V100"
    assert tr.filtered == 2  # jobB (no GPU), jobD (no tasks, failed)
    write(tmp_path, "pai_job_table.csv", "jobA,i1,alice,Terminated,400,100\n")
    with pytest.raises(TraceError) as ei:
        load_trace(jobs, "pai")
    assert (ei.value.line, ei.value.column) == (1, "end_time")


GENERIC = "when,len_min,ngpu,net,team\n0,10,4,resnet50,x\n30,1.5,1,,y\n"


def test_generic_mapping(tmp_path):
    p = write(tmp_path, "g.csv", GENERIC)
    # the time unit applies to every time column: submit 30 min = 1800 s, durations 10 and 1.5 min
    tr = load_trace(p, "generic", mapping="submit=when,duration=len_min,gpus=ngpu,model=net,tenant=team",
                    time_unit="min")
    assert [(j.id, j.submit, j.duration, j.gpus, j.model, j.tenant) for j in tr.jobs] == [
        ("job-2", 0.0, 600.0, 4, "resnet50", "x"), ("job-3", 1800.0, 90.0, 1, None, "y")]


def test_generic_mapping_errors(tmp_path):
    p = write(tmp_path, "g.csv", GENERIC)
    with pytest.raises(TraceError, match="must give"):
        parse_mapping("submit=when,gpus=ngpu")
    with pytest.raises(TraceError, match="unknown field"):
        parse_mapping("submit=a,duration=b,gpus=c,colour=d")
    with pytest.raises(TraceError, match="FIELD=COLUMN"):
        parse_mapping("submit")
    with pytest.raises(TraceError) as ei:
        load_trace(p, "generic", mapping="submit=when,duration=len_min,gpus=gpus")
    assert ei.value.column == "gpus" and ei.value.line == 1
    with pytest.raises(TraceError, match="needs a column mapping"):
        load_trace(p, "generic")


def test_registry_has_every_format():
    assert {"philly", "tiresias", "rubick", "pollux", "sia", "helios", "pai", "generic"} <= set(LOADERS)
