"""fio's options as a fio user expects them on a simulated drive: what changes nothing is
taken and named in one note, what cannot be simulated is refused all at once, and
values (rw suffixes, bs per direction, spans) are read as fio 3.33 reads them."""

import json
import re
import shutil
import subprocess

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.model import Op
from ssdlab.simfio.jobfile import ignored_note, parse_job_file
from ssdlab.simfio.run import plan, plan_all
from ssdlab.simfio.values import fio_size
from tests.conftest import run_cli
from tests.simfio.test_sim_fio import DEVICE, SMALL

FIO = shutil.which("fio")


def planned(text):
    [job] = parse_job_file(text, "x.fio")
    return plan(job, DEVICE, "x.fio")


def refusal(text):
    with pytest.raises(SsdlabError) as caught:
        [plan(job, DEVICE, "x.fio") for job in parse_job_file(text, "x.fio")]
    return str(caught.value)


IGNORED = """[global]
filename=/dev/nvme0n1
directory=/mnt
ioengine=io_uring
thread
direct=1
buffered=0
invalidate=1
gtod_reduce=1
group_reporting
clocksource=cpu
[a]
rw=randwrite
size=4m
norandommap
randrepeat=0
randseed=42
iodepth_batch_submit=8
hipri
overwrite=1
end_fsync=1
fsync_on_close=1
create_on_open=1
unlink=1
refill_buffers
write_bw_log=a
numjobs=1
"""


def test_options_that_change_nothing_run_and_are_named_in_one_note(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text(IGNORED)
    proc = run_cli("sim", "fio", job, "--drive", SMALL, cwd=tmp_path)  # its logs go there
    [note] = [line for line in proc.stderr.splitlines() if line.strip()]
    assert note.startswith(f"note: {job}: these options change nothing on a simulated drive")
    for name in ("filename=/dev/nvme0n1", "directory=/mnt", "ioengine=io_uring", "thread", "direct=1",
                 "buffered=0", "invalidate=1", "gtod_reduce=1", "clocksource=cpu",
                 "randrepeat=0", "randseed=42", "iodepth_batch_submit=8", "hipri",
                 "overwrite=1", "end_fsync=1", "fsync_on_close=1", "create_on_open=1", "unlink=1",
                 "refill_buffers"):
        assert re.search(rf"(: |; |, ){re.escape(name)}(,| \()", note), name
    # modelled now: reporting groups, the random map, jobs at once, the logs fio writes
    for name in ("group_reporting", "norandommap", "numjobs", "write_bw_log"):
        assert not re.search(rf"(: |; |, ){name}", note), name
    assert "no page cache" in note
    assert json.loads(proc.stdout)["jobs"][0]["write"]["io_bytes"] == 4 << 20


def test_a_job_file_without_such_options_gets_no_note():
    assert ignored_note(parse_job_file("[a]\nrw=read\nsize=1m\n", "x.fio")) is None


def test_everything_that_cannot_be_simulated_is_refused_at_once_with_its_line(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[global]\nioengine=net\n[a]\nrw=read\nloops=4\nverify_only=1\nbsrange=4k-64k\n"
                   "rate_min=100\niodpeth=8\nfsync=1\n[b]\npercentage_random=50\n")
    proc = run_cli("sim", "fio", job, "--drive", SMALL, check=False)
    [line] = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and line.startswith(f"error: {job}: the simulator cannot run ")
    for what in ("ioengine=net (line 2): not an engine that sends the job's I/O to a drive",
                 "loops=4 (line 5): several files, or loops", "verify_only=1 (line 6)", "bsrange=4k-64k (line 7)",
                 "rate_min=100 (line 8)", "iodpeth=8 (line 9): not an option the simulator knows",
                 "fsync=1 (line 10): flushes", "percentage_random=50 (line 12)"):
        assert what in line, what


def test_each_jobs_value_problem_is_named_at_once():
    jobs = parse_job_file("[a]\nrw=randread:8\n[b]\nrw=randread\n[c]\nbs=4k,1.5k\nsize=1m\n", "x.fio")
    with pytest.raises(SsdlabError) as caught:
        plan_all(jobs, DEVICE, "x.fio")
    assert str(caught.value).startswith("x.fio: job [a] (line 1): rw=randread:8: ")
    assert "; job [c] (line 5): bs=4k,1.5k: " in str(caught.value) and "job [b]" not in str(caught.value)


@pytest.mark.parametrize("engine", ["null", "cpuio", "mmap", "rdma", "external:/x.so"])
def test_engines_that_do_not_send_block_io_to_a_drive_are_refused(engine):
    assert f"ioengine={engine} (line 2): not an engine" in refusal(f"[a]\nioengine={engine}\n")


def test_a_synchronous_engine_keeps_one_io_in_flight_as_fio_does(tmp_path):
    assert planned("[a]\niodepth=32\nsize=1m\n").step.iodepth == 1            # psync, fio's default
    assert planned("[a]\nioengine=sync\niodepth=32\nsize=1m\n").step.iodepth == 1
    assert planned("[a]\nioengine=libaio\niodepth=32\nsize=1m\n").step.iodepth == 32
    job = tmp_path / "j.fio"
    job.write_text("[a]\nrw=randread\niodepth=32\nsize=1m\n")
    proc = run_cli("sim", "fio", job, "--drive", SMALL)
    assert "ioengine=psync is synchronous, so the queue depth is capped at 1 (iodepth=32" in proc.stderr
    assert json.loads(proc.stdout)["jobs"][0]["iodepth_level"]["1"] == 100.0


@pytest.mark.parametrize("rw, op", [("randread:1", Op.RANDREAD), ("read:0", Op.READ), ("write:0k", Op.WRITE),
                                    ("readwrite", Op.RW)])
def test_rw_suffixes_that_change_nothing_are_taken(rw, op):
    assert planned(f"[a]\nrw={rw}\nsize=1m\n").step.rw is op


@pytest.mark.parametrize("rw, problem", [
    ("randread:8", "a new random offset only every 8 I/Os"),
    ("randtrimwrite", "not simulated yet")])
def test_rw_patterns_the_model_cannot_follow_are_refused(rw, problem):
    assert problem in refusal(f"[a]\nrw={rw}\nsize=1m\n")


@pytest.mark.parametrize("rw, op, delta", [("read:8k", Op.READ, 8192), ("write:-8k", Op.WRITE, -8192),
                                           ("randtrim", Op.RANDTRIM, 0), ("trimwrite", Op.TRIMWRITE, 0)])
def test_holes_backwards_offsets_and_trims_are_modelled(rw, op, delta):
    step = planned(f"[a]\nrw={rw}\nsize=1m\n").step
    assert (step.rw, step.offset_delta) == (op, delta)


@pytest.mark.parametrize("rw, bs, expected", [
    ("read", "4k,64k", 4096), ("write", "4k,64k", 65536), ("trim", "4k,64k", 65536),
    ("trim", "4k,64k,", 4096), ("read", ",8k", 4096), ("write", ",8k", 8192), ("randrw", "16k,16k", 16384)])
def test_bs_takes_a_size_per_direction_as_fio_does(rw, bs, expected):
    assert planned(f"[a]\nrw={rw}\nbs={bs}\nsize=1m\n").step.bs == expected


@pytest.mark.parametrize("bs, problem", [
    ("4k,64k", "different read and write block sizes in one job are not simulated yet"),
    ("4k,4k,4k,4k", "at most three sizes"), ("4k,1.5k", "fio 3.33 drops a fraction"),
    ("1000", "must be a multiple of 512 bytes"), ("0", "must be from 512 B to 1 GiB")])
def test_block_sizes_the_simulator_cannot_run_are_refused(bs, problem):
    assert problem in refusal(f"[a]\nrw=randrw\nbs={bs}\nsize=1m\n")


def test_spans_and_limits_in_whole_blocks_as_fio_counts_them():
    # fio 3.33: size=10000 bs=4k reads 3 blocks in order, 2 at random; io_size=10000 is 3 blocks
    assert planned("[a]\nrw=read\nsize=10000\n").step.bytes_limit == 12288
    assert planned("[a]\nrw=randread\nsize=10000\n").step.bytes_limit == 8192
    assert planned("[a]\nrw=randread\nsize=1m\nio_size=10000\n").step.bytes_limit == 12288


def test_offsets_in_bytes_are_taken_as_written_and_percentages_aligned_up():
    assert planned("[a]\noffset=4608\nsize=1m\n").step.offset == 4608
    assert planned("[a]\noffset=1%\nbs=1m\nsize=1m\n").step.offset == -(-DEVICE // 100 // 2**20) * 2**20
    assert "must be a multiple of 512 bytes" in refusal("[a]\noffset=1000\nsize=1m\n")


@pytest.mark.parametrize("option, problem", [
    ("runtime=1.5", "runtime=1.5: fio 3.33 drops a fraction"), ("runtime=1min", "as microseconds"),
    ("size=1.5m", "size=1.5m: fio 3.33 drops a fraction"), ("kb_base=1010", "must be 1024 or 1000"),
    ("percentile_list=50:abc", "up to 20 percentiles"), ("percentile_list=0:50", "above 0"),
    ("continue_on_error=maybe", "not one of none, 0, read")])
def test_values_fio_refuses_or_misreads_are_refused_naming_the_option(option, problem):
    assert problem in refusal(f"[a]\nsize=1m\n{option}\n")


def test_ramp_time_io_counts_towards_the_size_but_not_in_the_figures(tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[a]\nrw=read\nbs=128k\nsize=64m\nramp_time=4ms\n")
    doc = json.loads(run_cli("sim", "fio", job, "--drive", SMALL).stdout)
    read, [disk] = doc["jobs"][0]["read"], doc["disk_util"]
    assert 0 < read["io_bytes"] < 64 << 20 and disk["read_ios"] == 512  # the drive read it all
    assert read["total_ios"] == read["clat_ns"]["N"] < 512


SIZES = ["4k", "4kb", "4Ki", "1KiB", "1mb", "1MiB", "0x1000", "512b"]


@pytest.mark.skipif(FIO is None, reason="fio is not installed: sizes are checked against real fio's (CI installs it)")
def test_sizes_are_read_as_fio_reads_them(scratch):
    data = scratch / "data.bin"
    with open(data, "wb") as f:
        f.truncate(4 << 20)
    job = scratch / "sizes.fio"
    job.write_text(f"[global]\nfilename={data}\nrw=read\nbs=512\nioengine=psync\n"
                   + "".join(f"[{text}]\nsize={text}\n" for text in SIZES))
    proc = subprocess.run([FIO, "--output-format=json", str(job)], capture_output=True, text=True, timeout=60)
    jobs = json.loads(proc.stdout[proc.stdout.index("{"):])["jobs"]
    # fio reads on to the end of the block it started
    assert {j["jobname"]: j["read"]["io_bytes"] for j in jobs} == {
        text: -(-fio_size(text, DEVICE) // 512) * 512 for text in SIZES}
