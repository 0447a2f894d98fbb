"""fio's own iologs, recorded from the fio on this machine (Debian 12's is 3.33), read as
fio counted them; and fio reading the v2 sample as we read it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter

import pytest

from ssdlab.traces import Op, Trace
from tests.traces.samples import SAMPLES, write

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
BS = 4096
SIZE = 1 << 20


def fio(*options: str) -> dict:
    """fio's JSON of one job."""
    done = subprocess.run(["fio", "--name=rec", f"--size={SIZE}", f"--bs={BS}", "--output-format=json", *options],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]


def fio_version() -> tuple[int, ...]:
    out = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True).stdout
    return tuple(map(int, re.findall(r"\d+", out)[:2]))


def test_a_recorded_random_read_write_log_of_two_files(tmp_path):
    log = tmp_path / "rec.iolog"
    job = fio(f"--directory={tmp_path}", "--filename=d1:d2", "--rw=randrw", "--ioengine=psync", "--number_ios=64",
              "--fsync=4", "--randseed=7", f"--write_iolog={log}")
    trace = Trace(log)
    assert trace.format.name == "fio-v3"  # fio 3.31 and later write version 3 only
    records = list(trace)
    counts = Counter(r.op for r in records)
    assert counts[Op.READ] == job["read"]["total_ios"] and counts[Op.WRITE] == job["write"]["total_ios"]
    assert sum(r.length for r in records if r.op is Op.READ) == job["read"]["io_bytes"]
    assert sum(r.length for r in records if r.op is Op.WRITE) == job["write"]["io_bytes"]
    assert {r.device for r in records} == {str(tmp_path / "d1"), str(tmp_path / "d2")}
    sized = [r for r in records if r.op is not Op.FLUSH]
    assert all(r.length == BS and r.offset % BS == 0 and r.offset + r.length <= SIZE for r in sized)
    assert all(r.offset == r.length == 0 for r in records if r.op is Op.FLUSH)
    times = [r.time_us for r in records]
    assert times == sorted(times) and trace.findings.backwards == 0
    assert times[-1] < 60_000_000  # µs since the log started: this job takes well under a minute


def test_a_recorded_log_with_trims(tmp_path):
    log = tmp_path / "trim.iolog"
    # falloc's trim punches a hole, so it works on a file
    job = fio(f"--directory={tmp_path}", "--filename=d1", "--rw=trimwrite", "--ioengine=falloc", "--number_ios=16",
              f"--write_iolog={log}")
    records = list(Trace(log))
    counts = Counter(r.op for r in records)
    assert counts[Op.TRIM] == job["trim"]["total_ios"] > 0
    assert counts[Op.WRITE] == job["write"]["total_ios"]
    # trimwrite trims a block, then writes it
    assert [(r.op, r.offset) for r in records[:4]] == [(Op.TRIM, 0), (Op.WRITE, 0), (Op.TRIM, BS), (Op.WRITE, BS)]


def test_fio_replays_the_v2_sample_as_we_read_it(tmp_path):
    target = tmp_path / "d1"
    target.write_bytes(b"\0" * SIZE)
    v2 = write(tmp_path, "v2.iolog", SAMPLES["fio-v2"].text.replace("/dev/sdb", str(target)))
    ours = Counter(r.op for r in Trace(v2))
    job = fio("--ioengine=psync", f"--read_iolog={v2}")  # with --directory too, fio 3.33 dies of signal 11
    assert (job["read"]["total_ios"], job["write"]["total_ios"]) == (ours[Op.READ], ours[Op.WRITE])
    if fio_version() < (3, 34):  # fio 3.33 drops an iolog's trims ("bad ddir"), as METHODOLOGY.md says
        assert job["trim"]["total_ios"] == 0 < ours[Op.TRIM]
