"""The CLI refuses out-of-range numbers and unusable output paths before anything runs, with one
``error:`` line and exit 2; help shows plain metavars; JSON keys carry their units. Regression tests for
issue 9's CLI examples (those of `simulate`'s trace flags and of `solve` are tested by their owners)."""

import json

import pytest

from schedlab.benchmarks.cli import build_command
from schedlab.topology.errors import SpecError


def one_error(r, *needles):
    lines = [line for line in r.err.splitlines() if line.startswith("error:")]
    assert r.code == 2 and len(lines) == 1 and "Traceback" not in r.err, r
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize(("argv", "needles"), [
    (("simulate", "-w", "smoke", "--seed", "-1"), ("--seed",)),
    (("perf", "fit", "x.csv", "--seed", "-1"), ("--seed",)),
    (("perf", "curve", "vit", "--max", "-3"), ("--max",)),
    (("perf", "curve", "vit", "--resource", "cpu", "--gpus", "0"), ("--gpus",)),          # was silently 1
    (("perf", "curve", "vit", "--resource", "cpu", "--gpus", "1000"), ("--gpus", "64 GPUs")),  # printed zeros
    (("perf", "curve", "vit", "--max", "65"), ("--max", "64 GPUs")),
    (("perf", "curve", "vit", "--gpus", "4"), ("--gpus", "CPU curve")),                   # ignored before
    (("perf", "validate", "--fit-rows", "0"), ("--fit-rows",)),
    (("simulate", "-w", "smoke", "--load", "nan"), ("--load", "finite")),
    (("simulate", "-w", "smoke", "--load", "0"), ("--load",)),
    (("simulate", "-w", "smoke", "--large-share", "1.5"), ("--large-share",)),
    (("topology", "rubick-64", "--format", "xml"), ("--format",)),
    (("list", "--bogus"), ("--bogus",)),
])
def test_out_of_range_flags(cli, argv, needles):
    one_error(cli(*argv), *needles)


def test_out_naming_a_file_is_refused_before_the_run(cli, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    one_error(cli("simulate", "-w", "smoke", "--out", f), "--out", "file")
    one_error(cli("simulate", "-w", "smoke", "--out", f / "sub"), "--out", "file")
    assert f.read_text() == "x"
    r = cli("simulate", "-w", "smoke", "-q", "--out", tmp_path / "missing" / "deeper")  # made, with its parents
    assert r.code == 0 and (tmp_path / "missing" / "deeper" / "fifo" / "metrics.json").is_file()


def test_graphml_into_a_missing_folder_or_onto_a_folder(cli, tmp_path):
    one_error(cli("topology", "rubick-64", "--graphml", tmp_path / "nope" / "g.graphml"), "--graphml", "does not exist")
    one_error(cli("topology", "rubick-64", "--graphml", tmp_path), "--graphml", "is a folder")
    r = cli("topology", "rubick-64", "--graphml", tmp_path / "g.graphml")
    assert r.code == 0 and (tmp_path / "g.graphml").stat().st_size > 0


def test_big_spec_errors_are_instant_one_liners(cli, tmp_path):
    p = tmp_path / "huge.csv"
    p.write_text("num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,2,1000000000,8,64\n")
    one_error(cli("topology", p), "at most 10,000", "num_gpu_p_node")


def test_large_spec_reports_progress_on_stderr(cli, tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text("name: big\ndefaults: {gpus: 1, gpu_model: x, gpu_memory_gb: 16, cpus: 1, host_memory_gb: 1}\n"
                 "links: {machine: {bandwidth_gbps: 10}, rack: {bandwidth_gbps: 10}, network: {bandwidth_gbps: 10}}\n"
                 "racks: 2\nmachines_per_rack: 40000\n")
    r = cli("topology", p, "--format", "json")
    assert r.code == 0 and json.loads(r.out)["gpus"] == 80_000
    assert "building machines: 80,000/80,000" in r.err


def _commands(cmd, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, path + (name,))


def test_help_shows_plain_metavars(cli):
    for path, _ in _commands(build_command()):
        r = cli(*path, "--help")
        assert r.code == 0 and "Usage:" in r.out, (path, r)
        for bad in ("<bool>", "<list[", "<int>", "<str>", "<float>", "<path>"):
            assert bad not in r.out, (path, bad, r.out)


def test_topology_json_keys_carry_units(cli):
    data = json.loads(cli("topology", "dally-2", "--format", "json").out)
    assert "bandwidth_gbps" not in data
    assert data["bandwidth_gb_per_s"]["rack"] == {"min": 50.0, "max": 50.0}  # 400 Gb/s = 50 GB/s
    assert set(data["latency_us"]) == {"machine", "rack", "network"} and "host_memory_gb" in data


def test_list_yaml(cli):
    import yaml

    r = cli("list", "clusters", "--format", "yaml")
    assert r.code == 0 and "rubick-64" in yaml.safe_load(r.out)["clusters"]


def test_typer_exit_codes_and_bare_help(cli):
    r = cli()
    assert r.code == 2 and "Usage:" in r.err  # bare `schedlab`: the help (as click shows it)
    assert cli("--help").code == 0


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00binary", '{"kind": "joint"}'.encode("utf-16-le"), b""],
                         ids=["binary", "utf16-no-bom", "empty"])
@pytest.mark.parametrize("what", ["instance", "fit-samples", "spec"])
def test_unreadable_files_are_one_error_line(cli, tmp_path, data, what):
    # issue 9: binary or UTF-16 files given as a spec, instance or fit sample raised UnicodeDecodeError
    p = tmp_path / ("f.json" if what != "fit-samples" else "f.csv")
    p.write_bytes(data)
    argv = {"instance": ("solve", "--instance", p, "--method", "joint"),
            "fit-samples": ("perf", "fit", p, "--model", "vit"),
            "spec": ("topology", p)}[what]
    one_error(cli(*argv), str(p))


def test_solve_refuses_a_size_the_machine_cannot_hold(cli, monkeypatch):
    """Issue 26 item 9: ``--jobs 1000000000000`` was accepted and grew memory at ~55 MB/s with no output.
    1e12 jobs x 1,024 B = 931.3 TiB at least: more than any machine has."""
    import schedlab.benchmarks.cli.solve_cmd as sc

    code, out, err = cli("solve", "--generate", "joint", "--jobs", "1000000000000", "--method", "joint")
    assert code == 2 and err.startswith("error: ") and "needs at least 931.3 TiB" in err and "available" in err
    assert len(err.strip().splitlines()) == 1
    # 1,000 jobs on a machine with 512 KiB free: 1,000 KiB needed -> refused; with 2 MiB: accepted
    with pytest.raises(SpecError, match="1,000.0 KiB"):
        sc.check_size("joint", 1000, available=512 * 1024)
    assert sc.check_size("joint", 1000, available=2 << 20) == pytest.approx(1000 * sc.SECONDS_PER_JOB)


def test_long_generation_says_so(cli, monkeypatch):
    import schedlab.benchmarks.cli.solve_cmd as sc

    monkeypatch.setattr(sc, "PROGRESS_AFTER_S", 0.0)  # every generation counts as long
    code, out, err = cli("solve", "--generate", "tier-placement", "--jobs", "4", "--method", "tier-ilp",
                         "--time-limit", "10")
    assert code == 0, err
    assert "generating a tier-placement instance of 4 jobs on dally-2 (about 0 s)" in err
    assert "generated 4 jobs in" in err


def test_a_system_refusal_is_one_error_line(cli, tmp_path, monkeypatch):
    """Permission denied / read-only file system / disk full anywhere in a command: one ``error:`` line
    naming the path, exit 2 (issue 26 item 7: tracebacks from PermissionError and sqlite before)."""
    import errno

    import schedlab.benchmarks.harness.report as report

    for code_, words in ((errno.EACCES, "Permission denied"), (errno.EROFS, "Read-only file system"),
                         (errno.ENOSPC, "No space left on device")):
        def refuse(*a, _c=code_, **k):
            raise OSError(_c, __import__("os").strerror(_c), str(tmp_path / "plots"))

        monkeypatch.setattr(report, "render_report", refuse)
        code, out, err = cli("report", tmp_path)
        assert code == 2 and err == f"error: cannot write {tmp_path / 'plots'}: {words}\n", err
    monkeypatch.setattr(report, "render_report", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EIO, "I/O")))
    with pytest.raises(OSError):  # anything else is a bug and keeps its traceback
        cli("report", tmp_path)
