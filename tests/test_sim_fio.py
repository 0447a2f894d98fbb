"""`ssdlab sim fio`: fio job files on the simulator, fio's JSON out."""

import json
from pathlib import Path

import pytest

from ssdlab.backends.fio import parse
from ssdlab.errors import SsdlabError
from ssdlab.simfio.jobfile import parse_job_file
from ssdlab.simfio.values import ValueProblem, fio_size, fio_time
from tests.conftest import run_cli

SMALL = Path(__file__).parent / "data" / "small-tlc.toml"
DEVICE = 16 * 10**9


@pytest.mark.parametrize("text, expected", [
    ("4096", 4096), ("4k", 4096), ("4kb", 4096), ("128K", 131072), ("1m", 1 << 20), ("1g", 1 << 30),
    ("1MiB", 10**6), ("2gib", 2 * 10**9), ("10%", DEVICE // 10), ("100%", DEVICE)])
def test_sizes_as_fio_reads_them(text, expected):
    assert fio_size(text, DEVICE) == expected


@pytest.mark.parametrize("text", ["12 parsecs", "0%", "150%", "-4k"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueProblem):
        fio_size(text, DEVICE)


def test_times_in_the_options_default_unit_or_with_a_suffix():
    assert fio_time("60", "s") == 60 and fio_time("500ms", "s") == 0.5
    assert fio_time("100", "us") == pytest.approx(1e-4) and fio_time("2m", "s") == 120


def test_global_defaults_apply_to_the_jobs_after_them_in_order():
    jobs = parse_job_file("[global]\nbs=4k\nsize=1g\n[a]\nrw=read\n[b]\nbs=8k\nrw=write\ntime_based\n",
                          "x.fio")
    assert [j.name for j in jobs] == ["a", "b"]
    assert jobs[0].options == {"bs": "4k", "size": "1g", "rw": "read"}
    assert jobs[1].options["bs"] == "8k" and jobs[1].options["time_based"] is None


@pytest.mark.parametrize("text, message", [
    ("[a]\nrw=read\nverify=crc32\n", "x.fio:3: the simulator does not support the fio option `verify`"),
    ("rw=read\n[a]\n", "x.fio:1: an option before any"),
    ("[global]\nbs=4k\n", "has no job"),
])
def test_job_file_problems_are_named_with_their_line(text, message):
    with pytest.raises(SsdlabError, match=message):
        parse_job_file(text, "x.fio")


JOBS = """
[global]
ioengine=io_uring
direct=1
filename=/dev/nvme0n1
group_reporting
bs=4k
size=10%

[fill]
rw=write
bs=128k
iodepth=32

[randread]
stonewall
rw=randread
iodepth=4
size=8m
runtime=1
time_based

[mixed]
rw=randrw
rwmixwrite=30
io_size=8m

[thinking]
rw=randread
io_size=4m
thinktime=200
thinktime_blocks=8

[trim]
rw=trim
bs=1m
size=1g
"""


def test_a_job_file_runs_in_order_and_fios_own_parser_reads_the_answer(tmp_path):
    jobfile = tmp_path / "jobs.fio"
    jobfile.write_text(JOBS)
    doc = json.loads(run_cli("sim", "fio", jobfile, "--drive", SMALL).stdout)
    jobs = {j["jobname"]: j for j in doc["jobs"]}
    assert list(jobs) == ["fill", "randread", "mixed", "thinking", "trim"]
    found = {name: parse.directions(parse.job_of({"jobs": [j]})) for name, j in jobs.items()}
    assert found["fill"]["write"].bytes == DEVICE // 10 // (128 << 10) * (128 << 10)
    assert jobs["randread"]["read"]["runtime"] == 1000  # time_based: the runtime is the limit
    assert found["randread"]["read"].bytes > 8 << 20  # it looped over its span
    mixed = found["mixed"]
    assert mixed["read"].bytes + mixed["write"].bytes == 8 << 20
    assert mixed["write"].ios / (mixed["read"].ios + mixed["write"].ios) == pytest.approx(0.3, abs=0.05)
    assert found["thinking"]["read"].ios == 1024
    # 128 pauses of 200 us are part of fio's runtime, so they lower the IOPS
    assert jobs["thinking"]["read"]["runtime"] >= 128 * 0.2
    assert found["trim"]["trim"].ios == 1024
    for name, directions in found.items():
        for d in directions.values():
            pct = jobs[name][next(k for k in ("read", "write", "trim") if jobs[name][k]["total_ios"] == d.ios)]
            assert d.latency.p99_ns == int(pct["clat_ns"]["percentile"]["99.000000"])


def test_an_unknown_option_is_refused_cleanly(tmp_path):
    jobfile = tmp_path / "bad.fio"
    jobfile.write_text("[a]\nrw=read\nnumjobs=4\n")
    proc = run_cli("sim", "fio", jobfile, "--drive", SMALL, check=False)
    assert proc.returncode == 2 and "`numjobs`" in proc.stderr and "Traceback" not in proc.stderr
