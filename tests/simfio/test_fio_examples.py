"""fio's own example job files (fio's examples/ folder) run through `ssdlab sim fio`.

fio's files are GPL-licensed, so these are job files of our own that use the same options
as each example: numjobs, jobs at once without stonewall, group_reporting, bssplit with
blockalign, zoned and zipf distributions, backwards offsets, flow (fio's butterfly),
verify, fill_device, thinktime, write_bw_log. Each runs on the small test drive with
sizes cut down; real fio 3.33 runs the same file on a scratch file, and the two JSON
documents must have the same key paths job by job.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import SCRATCH_ROOT, run_cli
from tests.paths import SMALL_PRESET as SMALL
from tests.simfio.test_sim_fio_json import check_values, key_paths

FIO = shutil.which("fio")

# name: (job file with {data} for the target, what only the simulated drive takes)
EXAMPLES = {
    # fio-rand-read / fio-seq-read / aio-read: libaio reads of one file, several files at once
    "reads-at-once": """
[global]
ioengine=libaio
direct=1
filename={data}
size=16m
bs=4k
iodepth=8
[random]
rw=randread
[sequential]
rw=read
""",
    # fio-rand-write / fio-rand-RW / fio-seq-RW: numjobs copies of a mixed time-based job
    "numjobs": """
[global]
name=mixed
filename={data}
rw=randrw
rwmixread=60
rwmixwrite=40
bs=4k
numjobs=4
time_based
runtime=1
[file1]
size=16m
ioengine=libaio
iodepth=16
""",
    # ssd-steadystate: a sequential fill, then numjobs random writers reported as one
    "steady": """
[global]
ioengine=libaio
direct=1
group_reporting
filename={data}
size=16m
[sequential-fill]
description=Sequential fill phase
rw=write
iodepth=16
bs=1M
[random-write-steady]
stonewall
description=Random write steady state phase
rw=randwrite
bs=4K
iodepth=32
numjobs=4
io_size=4m
write_bw_log=steady
""",
    # jesd219 and iometer-file-access-server: a split of sizes, aligned, zoned
    "jesd219": """
[JESD219]
ioengine=libaio
direct=1
rw=randrw
norandommap
randrepeat=0
rwmixread=40
rwmixwrite=60
iodepth=64
numjobs=2
bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3
blockalign=4k
random_distribution=zoned:50/5:30/15:20/80
filename={data}
size=16m
io_size=8m
group_reporting
""",
    # rand-zones
    "zones": """
[zones]
filename={data}
size=16m
direct=1
bs=4k
rw=randread
norandommap
random_distribution=zoned:50/5:30/15:20/
""",
    # backwards-read and butterfly: offsets going down, and two jobs paced by flow
    "butterfly": """
[global]
filename={data}
size=16m
bs=4k
direct=1
[forward]
rw=read
flow=2
[backward]
rw=read:-8k
flow=2
""",
    # basic-verify: random writes read back
    "verify": """
[write-and-verify]
rw=randwrite
bs=4k
direct=1
ioengine=libaio
iodepth=16
verify=crc32c
filename={data}
size=8m
""",
    # fio's steadystate: the job ends once its last seconds are steady
    "steady-state": """
[ss]
filename={data}
size=16m
rw=randread
bs=4k
ioengine=libaio
direct=1
iodepth=4
runtime=8
time_based
ss=iops:50%
ss_dur=2
ss_ramp=1
""",
    # surface-scan: the whole device written, then read back in a second phase
    "surface": """
[global]
thread
bs=64k
direct=1
ioengine=sync
verify=meta
verify_pattern=0xaa555aa5
verify_interval=512
[write-phase]
filename={data}
rw=write
{fill}
do_verify=0
[verify-phase]
stonewall
create_serialize=0
filename={data}
rw=read
size=16m
do_verify=1
""",
}


def run_sim(name, tmp_path):
    jobfile = tmp_path / f"{name}.fio"
    jobfile.write_text(EXAMPLES[name].format(data="/dev/nvme0n1", fill="fill_device=1"))
    proc = run_cli("sim", "fio", jobfile, "--drive", SMALL, cwd=tmp_path)
    return json.loads(proc.stdout), proc.stderr


@pytest.fixture(scope="module")
def real():
    """fio 3.33's documents for the examples, on a scratch file (fill_device as size=)."""
    if FIO is None:
        pytest.skip("fio is not installed: the JSON is compared with real fio's (CI installs it)")
    scratch = Path(tempfile.mkdtemp(prefix="ssdlab-test-", dir=SCRATCH_ROOT))
    try:
        data = scratch / "data.bin"
        with open(data, "wb") as f:
            f.truncate(64 << 20)
        docs = {}
        for name, text in EXAMPLES.items():
            jobfile = scratch / f"{name}.fio"
            jobfile.write_text(text.format(data=data, fill="size=16m"))
            proc = subprocess.run([FIO, "--output-format=json+", str(jobfile)], capture_output=True,
                                  text=True, timeout=120, cwd=scratch, env={**os.environ, "LC_ALL": "C"})
            assert proc.returncode == 0, (name, proc.stderr)
            docs[name] = json.loads(proc.stdout[proc.stdout.index("{"):])
        return docs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_an_example_runs_with_fios_keys_job_by_job(name, real, tmp_path):
    sim, _ = run_sim(name, tmp_path)
    theirs = real[name]
    assert [j["jobname"] for j in sim["jobs"]] == [j["jobname"] for j in theirs["jobs"]]
    assert [j["groupid"] for j in sim["jobs"]] == [j["groupid"] for j in theirs["jobs"]]
    for ours, fios in zip(sim["jobs"], theirs["jobs"]):
        if name == "surface":  # fio ran size= where the simulator ran fill_device=
            ours, fios = ({k: v for k, v in j.items() if k != "job options"} for j in (ours, fios))
        assert key_paths(ours) == key_paths(fios), (name, fios["jobname"])
    check_values(sim)


def moved(job, direction):
    return job[direction]["io_bytes"]


def test_numjobs_run_at_once_each_with_its_own_figures(tmp_path):
    doc, _ = run_sim("numjobs", tmp_path)
    jobs = doc["jobs"]
    assert len(jobs) == 4 and {j["jobname"] for j in jobs} == {"file1"}  # a [global] name= names no job
    # at once: each ran for the runtime, the whole run took about one runtime, not four
    assert all(1000 <= j["read"]["runtime"] <= 1001 for j in jobs)
    assert doc["jobs"][0]["elapsed"] <= 2
    shares = [moved(j, "read") / (moved(j, "read") + moved(j, "write")) for j in jobs]
    assert all(abs(s - 0.6) < 0.05 for s in shares)


def test_group_reporting_adds_up_the_groups_jobs_and_logs_are_written(tmp_path):
    doc, _ = run_sim("steady", tmp_path)
    fill, steady = doc["jobs"]
    assert (fill["groupid"], steady["groupid"]) == (0, 1)
    assert moved(fill, "write") == 16 << 20
    assert moved(steady, "write") == 4 * (4 << 20) and steady["desc"] == "Random write steady state phase"
    logs = sorted(p.name for p in tmp_path.glob("steady_bw.*.log"))
    assert logs == [f"steady_bw.{n}.log" for n in (2, 3, 4, 5)]
    first = (tmp_path / "steady_bw.2.log").read_text().splitlines()
    assert len(first) == 1024 and first[0].count(", ") == 4  # one line per I/O: time, bw, dir, bs, prio


def test_a_split_of_sizes_gives_its_mean_size_and_zones_their_shares(tmp_path):
    doc, _ = run_sim("jesd219", tmp_path)
    [job] = doc["jobs"]
    split = {512: 4, 1024: 1, 1536: 1, 2048: 1, 2560: 1, 3072: 1, 3584: 1, 4096: 67, 8192: 10,
             16384: 7, 32768: 3, 65536: 3}
    mean = sum(bs * pct for bs, pct in split.items()) / 100
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    assert abs((moved(job, "read") + moved(job, "write")) / ios - mean) < 0.05 * mean
    assert abs(job["read"]["total_ios"] / ios - 0.4) < 0.03


def test_butterfly_jobs_keep_pace_and_the_backward_one_reads_every_other_block_down(tmp_path):
    doc, _ = run_sim("butterfly", tmp_path)
    forward, backward = doc["jobs"]
    assert moved(forward, "read") == moved(backward, "read") == 16 << 20
    assert abs(forward["read"]["runtime"] - backward["read"]["runtime"]) <= 0.1 * forward["read"]["runtime"]


def test_verify_reads_back_what_was_written(tmp_path):
    doc, stderr = run_sim("verify", tmp_path)
    [job] = doc["jobs"]
    assert moved(job, "write") == moved(job, "read") == 8 << 20
    # fio's random map writes every block once, so the verify finds every block written
    assert "never written" not in stderr


def test_fill_device_writes_the_whole_drive_then_the_second_phase_reads(tmp_path):
    doc, stderr = run_sim("surface", tmp_path)
    write, read = doc["jobs"]
    capacity = int(re.search(r"\(([\d,]+) bytes\)", stderr).group(1).replace(",", ""))
    assert moved(write, "write") == capacity // (64 << 10) * (64 << 10)
    assert moved(read, "read") == 16 << 20 and read["groupid"] == 1


def test_a_steady_job_stops_early_and_says_so_as_fio_does(tmp_path):
    doc, _ = run_sim("steady-state", tmp_path)
    [job] = doc["jobs"]
    ss = job["steadystate"]
    assert ss["ss"] == "iops:50.000000%" and ss["duration"] == 2 and ss["attained"] == 1
    # judged from one second after the 1 s ramp on: the window of two is full at 3 s
    assert 3000 <= job["read"]["runtime"] <= 3001
    assert len(ss["data"]["iops"]) == 2 and ss["data"]["iops_mean"] == sum(ss["data"]["iops"]) // 2
    assert float(ss["criterion"].rstrip("%")) < 50


@pytest.mark.parametrize("text, refusal", [
    ("[job]\nioengine=null\nrw=randread\nsize=16m\nrandom_distribution=zipf:0.5\n",
     "ioengine=null (line 2): not an engine that sends the job's I/O to a drive"),
    ("[device]\nrw=randread\nioengine=libaio\niodepth=128\nlatency_target=500000\n",
     "latency_target=500000 (line 5): steering the queue depth by latency"),
])
def test_what_the_simulator_does_not_run_is_refused_saying_why(text, refusal, tmp_path):
    jobfile = tmp_path / "j.fio"
    jobfile.write_text(text)
    proc = run_cli("sim", "fio", jobfile, "--drive", SMALL, check=False)
    assert proc.returncode == 2 and refusal in " ".join(proc.stderr.split())
