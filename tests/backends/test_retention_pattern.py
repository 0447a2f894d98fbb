"""The retention test's pattern through each backend (`run_pattern`): on a real file, fio writes the
seeded pattern and reads it back checking every block, what it finds kept with the result; on
the simulated drive, which keeps no data, a plain write and a read whose check is its decoding."""

from __future__ import annotations

import os

import pytest

from ssdlab.backends.fio import FioBackend, jobfile
from ssdlab.backends.fio.backend import UNLOGGED_CHECK_NOTE
from ssdlab.backends.sim import SimBackend
from ssdlab.model import Op, Phase, Step
from ssdlab.presets import load_preset
from ssdlab.units import KiB, MiB
from tests.paths import SMALL_PRESET

SIZE = 64 * MiB


def backend(path):
    return FioBackend(path, "file", purge=lambda: ("recreated",))


def steps(size: int = SIZE, bs: int = 128 * KiB) -> tuple[Step, Step]:
    return (Step(label="write", phase=Phase.PRECONDITION, rw=Op.WRITE, bs=bs, iodepth=32, size=size),
            Step(label="read", rw=Op.READ, bs=bs, iodepth=32, size=size))


@pytest.fixture
def target(scratch):
    path = scratch / "target.img"
    with open(path, "wb") as f:
        f.write(os.urandom(MiB) * (SIZE // MiB))
    return path


def test_the_check_reads_every_block_of_the_seeded_pattern_and_only_reads(target):
    write, read = steps()
    fio = backend(target)
    written = fio.run_pattern(write, seed=123).result
    assert set(written.directions) == {"write"} and written.write.bytes == SIZE and written.verify is None
    outcome = fio.run_pattern(read, seed=123)
    checked = outcome.result
    # verify_only counts the writes it replays, which it never issues: the result reads only
    assert set(checked.directions) == {"read"} and checked.read.bytes == SIZE and checked.read.ios == 512
    assert checked.per_second and checked.read.latency.p99_ns > 0 and checked.busy_s > 0
    assert checked.verify.ok and checked.verify.summary == "all 512 blocks verified"
    (job,) = outcome.commands
    assert "verify_only=1" in job and "randseed=123" in job and "rw=readwrite" in job and "iodepth=32" in job
    assert job.count("rw=") == 1 and job.count("bs=") == 1  # the pattern's options replace the step's


def test_another_seed_or_damaged_data_is_a_finding_with_offsets_not_a_failure(target):
    write, read = steps()
    fio = backend(target)
    fio.run_pattern(write, seed=5)
    other = fio.run_pattern(read, seed=6).result.verify  # a pattern that is not this run's
    assert (other.failed, other.kinds, other.ok) == (512, {"wrong_seed": 512}, False)
    assert len(other.bad) == 100 and other.bad[0].offset == 0  # the first of them kept with the result
    with open(target, "r+b") as f:
        f.seek(3 * 128 * KiB + 4000)
        f.write(b"\x00" * 8)
    damaged = fio.run_pattern(read, seed=5).result.verify
    assert [(b.offset, b.length, b.kind) for b in damaged.bad] == [(3 * 128 * KiB, 128 * KiB, "checksum")]


def test_a_check_too_long_to_log_each_read_has_no_per_second_series_and_says_why(target, monkeypatch):
    # fio logs each I/O of a run of at most PER_IO_LOG_MAX (65536): a 1 TB drive's check at 128 KiB is
    # 8 M reads, whose bandwidth fio does not log for a verify pass. The limit lowered stands for it.
    monkeypatch.setattr(jobfile, "PER_IO_LOG_MAX", 100)
    write, read = steps()
    fio = backend(target)
    assert fio.run_pattern(write, seed=9).result.per_second  # a write's bandwidth is logged
    checked = fio.run_pattern(read, seed=9).result
    assert checked.verify.ok and checked.read.ios == 512 and checked.read.mbps > 0
    assert checked.per_second == () and UNLOGGED_CHECK_NOTE in checked.notes


def test_a_step_that_is_not_one_pass_over_its_span_carries_no_pattern(target):
    for step in (Step(label="r", rw=Op.RANDREAD, bs=4096, size=SIZE),
                 Step(label="r", rw=Op.READ, bs=4096, size=SIZE, io_size=MiB)):
        with pytest.raises(ValueError, match="not one sequential pass over its span"):
            backend(target).run_pattern(step, seed=1)


def test_a_simulated_drive_writes_plainly_and_checks_by_decoding():
    sim = SimBackend(load_preset(str(SMALL_PRESET)))
    write, read = steps(256 * MiB)
    assert sim.run_pattern(write, seed=1).result.verify is None
    checked = sim.run_pattern(read, seed=1).result
    assert checked.read.ios == 2048 and checked.verify.ok and checked.verify.failed == 0
    assert checked.verify.summary == ("all 2048 reads decoded (a simulated drive keeps no data: its decoding is "
                                      "the check)")
