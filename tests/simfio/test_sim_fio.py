"""`ssdlab sim fio`: fio job files on the simulator, fio's JSON out."""

import json
import re

import pytest

from ssdlab.backends.fio import parse
from ssdlab.backends.sim import SimBackend
from ssdlab.errors import SsdlabError
from ssdlab.presets import load_preset
from ssdlab.simfio.jobfile import parse_job_file
from ssdlab.simfio.run import plan, run_batch
from ssdlab.simfio.values import ValueProblem, fio_size, fio_time
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET as SMALL

DEVICE = 16 * 10**9


def plan_of(text):
    [job] = parse_job_file(text, "x.fio")
    return plan(job, DEVICE, "x.fio")


# each checked against fio 3.33 (io_bytes of a sequential read of size=VALUE at bs=512)
@pytest.mark.parametrize("text, expected", [
    ("4096", 4096), ("4k", 4096), ("4kb", 4096), ("4Ki", 4096), ("128K", 131072), ("1m", 1 << 20),
    ("1mb", 1 << 20), ("1Mi", 1 << 20), ("1g", 1 << 30), ("1MiB", 10**6), ("1KiB", 1000),
    ("2gib", 2 * 10**9), ("0x1000", 4096), ("512b", 512), ("10%", DEVICE // 10), ("100%", DEVICE)])
def test_sizes_as_fio_reads_them(text, expected):
    assert fio_size(text, DEVICE) == expected


def test_kb_base_1000_swaps_the_units():
    assert fio_size("4k", DEVICE, kb_base=1000) == 4000 and fio_size("4kib", DEVICE, kb_base=1000) == 4096


@pytest.mark.parametrize("text, problem", [
    ("12 parsecs", "fio 3.33 reads a unit only right after the number"),
    ("4 k", "remove the space"),                   # fio: 4 bytes
    ("1.5m", "fio 3.33 drops a fraction"),        # fio: 1 byte
    ("12.5%", "fio 3.33 drops a fraction"),       # fio: 12 bytes
    ("1e3", "'1e3' is not a size"),               # fio: 1 byte
    ("(2*1024)", "is not a size"), ("0%", "between 0 and 100 %"), ("150%", "between 0 and 100 %"),
    ("-4k", "is not a size")])
def test_sizes_fio_refuses_or_misreads_are_refused_saying_what_to_write(text, problem):
    with pytest.raises(ValueProblem, match=re.escape(problem)):
        fio_size(text, DEVICE)


def test_times_in_the_options_default_unit_or_with_a_suffix():
    assert fio_time("60", "s") == 60 and fio_time("500ms", "s") == 0.5 and fio_time("2S", "s") == 2
    assert fio_time("100", "us") == pytest.approx(1e-4) and fio_time("2m", "s") == 120
    assert fio_time("3msec", "s") == 0.003 and fio_time("7usec", "s") == pytest.approx(7e-6)


# fio 3.33 reads 1.5s as 1 s, 0.5 as 0 (no limit), 500 ms as 500 s, 1min and 1sec as 1 us
@pytest.mark.parametrize("text, problem", [
    ("1.5s", "e.g. 1500ms for 1.5s"), ("0.5", "drops a fraction"), ("500 ms", "remove the space"),
    ("1min", "reads an unknown unit as microseconds"), ("1sec", "unknown unit"), ("0x2", "not a time")])
def test_times_fio_misreads_are_refused(text, problem):
    with pytest.raises(ValueProblem, match=re.escape(problem)):
        fio_time(text, "s")


def test_global_defaults_apply_to_the_jobs_after_them_in_order():
    jobs = parse_job_file("[global]\nbs=4k\nsize=1g\n[a]\nrw=read\n[b]\nbs=8k\nrw=write\ntime_based\n",
                          "x.fio")
    assert [j.name for j in jobs] == ["a", "b"]
    assert jobs[0].options == {"bs": "4k", "size": "1g", "rw": "read"}
    assert jobs[1].options["bs"] == "8k" and jobs[1].options["time_based"] is None
    assert list(jobs[1].own) == ["bs", "rw", "time_based"] and list(jobs[1].defaults) == ["bs", "size"]


def test_aliases_are_read_as_the_options_they_stand_for():
    [job] = parse_job_file("[a]\nReadWrite=randread\nblocksize=8k\ntimeout=5\nio_limit=1m\n", "x.fio")
    assert job.options == {"rw": "randread", "bs": "8k", "runtime": "5", "io_size": "1m"}
    assert job.settings["rw"].spelled == "ReadWrite" and job.settings["rw"].line == 2


@pytest.mark.parametrize("text, message", [
    ("[a]\nrw=read\nverify_only=1\n", "x.fio: the simulator cannot run verify_only=1 (line 3)"),
    ("rw=read\n[a]\n", "x.fio:1: an option before any"),
    ("[global]\nbs=4k\n", "has no job"),
])
def test_job_file_problems_are_named_with_their_line(text, message):
    with pytest.raises(SsdlabError, match=re.escape(message)):
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
stonewall
rw=randrw
rwmixwrite=30
io_size=8m

[thinking]
stonewall
rw=randread
io_size=4m
thinktime=200
thinktime_blocks=8

[trim]
stonewall
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
    # fio goes on while a sequential job's next block starts inside its span
    assert found["fill"]["write"].bytes == -(-DEVICE // 10 // (128 << 10)) * (128 << 10)
    # time_based: the runtime is the limit (fio's ms round up; the last I/Os end after it)
    assert 1000 <= jobs["randread"]["read"]["runtime"] <= 1001
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
    jobfile.write_text("[a]\nrw=read\nnumjobs=4\nloops=3\n")
    proc = run_cli("sim", "fio", jobfile, "--drive", SMALL, check=False)
    assert proc.returncode == 2 and "loops=3 (line 4)" in proc.stderr and "Traceback" not in proc.stderr


def test_think_time_and_ramp_are_the_jobs_own_in_the_simulator():
    """thinktime and ramp_time go to the simulator with the job (crates/ssdsim/src/run runs
    them): a think period after every thinktime_blocks I/Os, the ramp left out of the figures."""
    thinking = plan_of("[a]\nrw=read\noffset=1m\nsize=1m\nio_size=3m\nthinktime=100\nthinktime_blocks=96\n")
    assert (thinking.step.thinktime, thinking.step.thinktime_blocks) == (1e-4, 96)
    assert thinking.step.io_size == 3 << 20 and thinking.step.size == 1 << 20
    backend = SimBackend(load_preset(str(SMALL)))
    [run] = run_batch(backend, [thinking], 0)
    assert run.result.read.bytes == 3 << 20 and run.piece_ios == (96,) * 8
    assert run.elapsed_s >= 8 * 1e-4  # the think time is the job's
    ramped = plan_of("[a]\nrw=read\nbs=1m\nsize=1g\nramp_time=10ms\n")
    assert ramped.step.ramp == 0.01
    [run] = run_batch(backend, [ramped], 0)
    assert 0 < run.result.read.bytes < 1 << 30  # what the ramp read is not in the figures


def test_reads_of_a_fresh_drive_are_said_to_find_no_data_and_prefill_writes_it(tmp_path):
    """A fresh drive answers reads of blocks never written without its NAND (as real drives
    answer deallocated blocks): fast, and said; --prefill writes the ranges first."""
    jobfile = tmp_path / "reads.fio"
    jobfile.write_text("[global]\nioengine=libaio\nbs=4k\niodepth=4\nsize=256m\nruntime=1\n"
                       "[rand-read]\nrw=randread\n[seq-write]\nrw=write\nstonewall\n")
    fresh = run_cli("sim", "fio", jobfile, "--drive", SMALL)
    said = " ".join(fresh.stderr.split())
    assert "job [rand-read]: 100 % of its reads were of blocks never written" in said
    assert "job [seq-write]: " not in said
    prefilled = run_cli("sim", "fio", jobfile, "--drive", SMALL, "--prefill")
    assert "never written" not in prefilled.stderr
    iops = [json.loads(p.stdout)["jobs"][0]["read"]["iops"] for p in (fresh, prefilled)]
    assert iops[0] > 2 * iops[1]  # zeroes from the controller, against data from the flash


def test_a_trim_of_1_gib_blocks_runs_as_fio_takes_it(tmp_path):
    """fio sets no largest block size: a TRIM in 1 GiB blocks is valid fio, and runs."""
    jobfile = tmp_path / "t.fio"
    jobfile.write_text("[t]\nrw=trim\nbs=1g\nsize=4g\n")
    [job] = json.loads(run_cli("sim", "fio", jobfile, "--drive", SMALL).stdout)["jobs"]
    assert job["trim"]["total_ios"] == 4 and job["trim"]["io_bytes"] == 4 << 30
