"""`ssdlab sim fio` prints fio 3.33's JSON: every key path real fio prints for the same
job file (json+), with values that hold together as fio's do."""

import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ssdlab.model import Latency
from ssdlab.simfio.stats import (
    Samples,
    depth_levels,
    direction_samples,
    latency_ranges,
    latency_stddev,
    percentages,
    window_ios,
)
from tests.conftest import SCRATCH_ROOT, run_cli
from tests.simfio.test_sim_fio import SMALL

FIO = shutil.which("fio")
DATA_BYTES = 64 << 20

# Jobs one after the other (stonewall: the simulator's order), every direction and engine
# kind, aliases and the options that add keys to fio's JSON. fio cannot trim a file.
JOBS = """
[global]
filename={data}
size=64m
ioengine=libaio
direct=1
bs=4k
iodepth=4

[seqread]
rw=read
blocksize=128k

[randwrite]
stonewall
readwrite=randwrite
io_size=8m
thinktime=100
thinktime_blocks=64

[randrw]
stonewall
rw=randrw
rwmixread=70
runtime=2
time_based
clat_percentiles=0
lat_percentiles=1

[sync]
stonewall
name=renamed
description=one I/O at a time
ioengine=psync
iodepth=8
rw=randread
io_size=4m
percentile_list=50:99:99.9
slat_percentiles=1
continue_on_error=all
"""


def key_paths(node, prefix=""):
    """Every key path; a list's elements share `[]`; histogram bins' keys are data."""
    paths = set()
    if isinstance(node, dict):
        for key, value in node.items():
            paths.add(f"{prefix}/{key}")
            if key != "bins":
                paths |= key_paths(value, f"{prefix}/{key}")
    elif isinstance(node, list):
        for element in node:
            paths |= key_paths(element, f"{prefix}[]")
    return paths


@pytest.fixture(scope="module")
def outputs():
    """(fio --version, fio's document, the simulator's) for JOBS."""
    if FIO is None:
        pytest.skip("fio is not installed: the JSON is compared with real fio's (CI installs it)")
    scratch = Path(tempfile.mkdtemp(prefix="ssdlab-test-", dir=SCRATCH_ROOT))  # O_DIRECT works there
    try:
        data = scratch / "data.bin"
        with open(data, "wb") as f:
            f.truncate(DATA_BYTES)
        jobfile = scratch / "jobs.fio"
        jobfile.write_text(JOBS.format(data=data))
        real = subprocess.run([FIO, "--output-format=json+", str(jobfile)], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "LC_ALL": "C"})
        assert real.returncode == 0, real.stderr
        sim = run_cli("sim", "fio", jobfile, "--drive", SMALL)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    version = subprocess.run([FIO, "--version"], capture_output=True, text=True).stdout.strip()
    return version, json.loads(real.stdout[real.stdout.index("{"):]), json.loads(sim.stdout)


def test_every_key_path_fio_prints_the_simulator_prints(outputs):
    version, real, sim = outputs
    # fio has no disk_util where it finds no disk under the file (overlayfs, say)
    left_out = {"jobs"} | ({"disk_util"} if "disk_util" not in real else set())
    assert key_paths({k: v for k, v in sim.items() if k not in left_out}) == \
        key_paths({k: v for k, v in real.items() if k not in left_out}), version
    assert len(sim["jobs"]) == len(real["jobs"])
    for ours, theirs in zip(sim["jobs"], real["jobs"]):
        assert key_paths(ours) == key_paths(theirs), (version, theirs["jobname"])


def check_values(doc):
    """What holds in fio's JSON: fio's own output passes it, and so must the simulator's."""
    for job in doc["jobs"]:
        total = 0
        for name in ("read", "write", "trim"):
            d = job[name]
            total += d["total_ios"]
            assert d["io_kbytes"] == d["io_bytes"] >> 10
            if d["runtime"]:
                assert d["bw_bytes"] == 1000 * d["io_bytes"] // d["runtime"]
                assert d["bw"] == d["bw_bytes"] // 1024
                assert d["iops"] == pytest.approx(1000 * d["total_ios"] / d["runtime"], rel=1e-6)
            for stat in ("bw", "iops"):
                low, high, mean = (d[f"{stat}_{k}"] for k in ("min", "max", "mean"))
                n, dev = d[f"{stat}_samples"], d["bw_dev" if stat == "bw" else "iops_stddev"]
                assert (low <= mean <= high or n == 0) and dev <= spread_bound(low, high, mean, n)
            for kind in ("slat_ns", "clat_ns", "lat_ns"):
                lat = d[kind]
                if lat["N"]:
                    assert lat["min"] <= lat["mean"] <= lat["max"]
                    assert lat["stddev"] <= spread_bound(lat["min"], lat["max"], lat["mean"], lat["N"])
                if "percentile" in lat:
                    values = list(lat["percentile"].values())
                    assert values == sorted(values) and lat["min"] <= values[0]
                    assert sum(lat["bins"].values()) == lat["N"] == d["total_ios"]
        for key in ("iodepth_level", "latency_ns", "latency_us", "latency_ms"):
            # percentages of all I/Os; fio shows one that is not 0 as at least 0.1 (0.01)
            shares = [v for k in (("latency_ns", "latency_us", "latency_ms") if key != "iodepth_level"
                                  else (key,)) for v in job[k].values()]
            assert total == 0 or 100 - 1e-3 <= sum(shares) <= 100 + 0.1 * len(shares)


def spread_bound(low, high, mean, n):
    """The largest sample deviation n values within [low, high] with this mean can have."""
    return math.sqrt(max((high - mean) * (mean - low), 0) * n / (n - 1)) * (1 + 1e-6) + 1e-6 if n > 1 else 0


def test_values_hold_together_in_fios_json_and_in_the_simulators(outputs):
    _, real, sim = outputs
    check_values(real)
    check_values(sim)


def test_what_the_simulation_shows_of_its_queue_slat_and_drive(outputs):
    _, _, sim = outputs
    jobs = {job["jobname"]: job for job in sim["jobs"]}
    # a synchronous engine keeps one I/O in flight, and fio times no submission of it
    assert jobs["renamed"]["iodepth_level"]["1"] == 100.0 and jobs["renamed"]["latency_depth"] == 8
    assert jobs["renamed"]["read"]["slat_ns"]["N"] == 0 and jobs["renamed"]["desc"] == "one I/O at a time"
    # libaio at QD4: the first three I/Os find the queue filling, the rest find it full
    assert jobs["seqread"]["iodepth_level"] == pytest.approx(
        {"1": 100 / 512, "2": 200 / 512, "4": 100 * 509 / 512, "8": 0, "16": 0, "32": 0, ">=64": 0}, abs=1e-6)
    assert jobs["seqread"]["read"]["slat_ns"] == {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 512}
    # a 2 s job: a sample per whole second, each direction's share of each second
    mixed = jobs["randrw"]
    assert mixed["read"]["bw_samples"] == mixed["write"]["iops_samples"] == 2
    assert "percentile" in mixed["read"]["lat_ns"] and "percentile" not in mixed["read"]["clat_ns"]
    [disk] = sim["disk_util"]
    assert disk["name"] == f"sim:{SMALL}" and disk["read_merges"] == disk["write_merges"] == 0
    assert disk["read_ios"] == sum(job["read"]["total_ios"] for job in sim["jobs"])
    assert 0 < disk["util"] <= 100
    # options as fio lists them: by their own names (blocksize= is bs), bare flags left out
    assert sim["global options"]["ioengine"] == "libaio"
    assert jobs["seqread"]["job options"] == {"rw": "read", "bs": "128k"}
    assert "time_based" not in jobs["randrw"]["job options"]


def test_disk_util_0_in_every_job_leaves_the_drive_out(tmp_path):
    jobfile = tmp_path / "j.fio"
    jobfile.write_text("[global]\ndisk_util=0\nsize=1m\n[a]\nrw=read\n")
    assert "disk_util" not in json.loads(run_cli("sim", "fio", jobfile, "--drive", SMALL).stdout)


# -- fio's arithmetic, piece by piece ----------------------------------------------------

def test_samples_are_whole_seconds_and_a_direction_idle_in_one_has_none():
    # two pieces: 1.5 s of 1000 I/Os per s, 0.5 s idle, then 0.8 s of 2000 per s
    series = [(0.0, 1.0, 1000.0), (1.0, 1.5, 500.0), (2.0, 2.8, 1600.0)]
    windows = window_ios(series, 2.8)
    assert windows == [1000.0, 500.0]  # the third second had not ended
    bw, iops = direction_samples([0.0, *windows], 0.25, 4096)
    assert iops.values == (250, 125) and bw.values == (1000, 500)
    assert Samples((3, 5)).stddev == pytest.approx(math.sqrt(2)) and Samples((7,)).stddev == 0.0


def test_queue_depth_levels_as_fio_counts_them():
    # fio 3.33, libaio, iodepth=8, 2048 reads: 1: 0.1 (one), 2: 0.1 (two), 4: 0.195312 (four)
    counts = depth_levels([2048], 8)
    assert counts == [1, 2, 4, 2041, 0, 0, 0]
    assert percentages(counts, 2048, 0.1)[:4] == pytest.approx([0.1, 0.1, 0.195312, 99.658203], abs=1e-6)
    assert depth_levels([3, 3], 8)[:2] == [2, 4]  # pieces shorter than the queue never fill it


def test_latency_ranges_end_before_their_bounds():
    hist = ((999, 1), (1000, 2), (1999, 3), (2000, 4), (999_999, 5), (1_999_999, 6), (2_000_000_000, 7))
    ns, us, ms = latency_ranges([hist])
    assert ns[-1] == 1 and us[0] == 5 and us[1] == 4 and us[-1] == 5 and ms[0] == 6 and ms[-1] == 7


def test_a_latency_deviation_never_exceeds_what_min_max_and_mean_allow():
    # every latency 1000 ns, counted in a bin whose value is 1008: no spread at all
    same = Latency.from_histogram([(1008, 50)], 1000.0, 1000, 1000)
    assert latency_stddev(same) == 0.0
    two = Latency.from_histogram([(100, 1), (300, 1)], 200.0, 100, 300)
    assert latency_stddev(two) == pytest.approx(math.sqrt(20000))
