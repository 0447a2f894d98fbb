"""The client suite compiles to exactly METHODOLOGY.md's steps."""

import pytest

from ssdlab.catalogue import CATALOGUE, Scale, compile_tests, lookup
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase
from ssdlab.suites import load_suite
from ssdlab.units import GiB, KiB, MiB

TB = 10**12


def compiled(test_id, scale=1.0, capacity=TB):
    return lookup(test_id).compile(Scale(scale), capacity)


def measured(test):
    return [s for s in test.steps if s.phase is Phase.MEASURE]


def test_client_suite_has_the_eleven_tests_in_order():
    suite, _ = load_suite("client")
    assert suite.tests == (
        "rand-read-burst", "rand-read-sustained", "rand-write-burst", "rand-write-sustained",
        "seq-read-burst", "seq-read-sustained", "seq-write-burst", "seq-write-sustained",
        "mixed-random", "mixed-sequential", "whole-drive-fill")
    assert {t for name in ("client", "lab", "enterprise", "power", "aged", "retention", "endurance", "trace", "pts",
                           "pts-enterprise")
            for t in load_suite(name)[0].tests} \
        == set(CATALOGUE)


@pytest.mark.parametrize("test_id, rw, bs, span, burst, total", [
    ("rand-read-burst", Op.RANDREAD, 4 * KiB, 16 * GiB, 32 * MiB, GiB),
    ("rand-write-burst", Op.RANDWRITE, 4 * KiB, 16 * GiB, 4 * MiB, 128 * MiB),
    ("seq-read-burst", Op.READ, 128 * KiB, 16 * GiB, 128 * MiB, GiB),
    ("seq-write-burst", Op.WRITE, 128 * KiB, 16 * GiB, 128 * MiB, GiB),
])
def test_burst_tests(test_id, rw, bs, span, burst, total):
    test = compiled(test_id)
    purge, fill, step = test.steps
    assert purge.phase is Phase.PURGE and purge.size == TB // (128 * KiB) * 128 * KiB
    assert (fill.phase, fill.rw, fill.size, fill.bs, fill.iodepth) == (
        Phase.PRECONDITION, Op.WRITE, span, 128 * KiB, 32)
    assert (step.rw, step.bs, step.iodepth, step.size, step.offset) == (rw, bs, 1, span, 0)
    assert (step.burst_bytes, step.io_size, step.duty_cycle) == (burst, total, 0.2)
    assert step.bursts == total // burst
    assert step.runtime is None and step.idle_after == 0


@pytest.mark.parametrize("test_id, rw, bs", [
    ("rand-read-sustained", Op.RANDREAD, 4 * KiB),
    ("rand-write-sustained", Op.RANDWRITE, 4 * KiB),
    ("seq-read-sustained", Op.READ, 128 * KiB),
    ("seq-write-sustained", Op.WRITE, 128 * KiB),
])
def test_sustained_tests_sweep_queue_depths(test_id, rw, bs):
    test = compiled(test_id)
    assert test.steps[1].size == 64 * GiB  # 64 GiB of data present
    steps = measured(test)
    assert [s.iodepth for s in steps] == [1, 2, 4, 8, 16, 32]
    for s in steps:
        assert (s.rw, s.bs, s.size) == (rw, bs, 64 * GiB)
        assert (s.runtime, s.io_size, s.idle_after) == (60.0, 32 * GiB, 60.0)
        assert s.duty_cycle is None and s.burst_bytes is None


@pytest.mark.parametrize("test_id, rw, bs, qd", [
    ("mixed-random", Op.RANDRW, 4 * KiB, 4), ("mixed-sequential", Op.RW, 128 * KiB, 1)])
def test_mixed_tests_have_eleven_mixes_at_half_duty(test_id, rw, bs, qd):
    steps = measured(compiled(test_id))
    assert [s.rwmixread for s in steps] == [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]
    for s in steps:
        assert (s.rw, s.bs, s.iodepth, s.size) == (rw, bs, qd, 64 * GiB)
        assert (s.runtime, s.io_size, s.duty_cycle) == (60.0, 32 * GiB, 0.5)


def test_whole_drive_fill_writes_everything_from_purged():
    purge, fill = compiled("whole-drive-fill", capacity=512 * GiB).steps
    assert purge.phase is Phase.PURGE
    assert (fill.rw, fill.bs, fill.iodepth, fill.size) == (Op.WRITE, 128 * KiB, 32, 512 * GiB)
    assert fill.per_gib_series and fill.runtime is None and fill.io_size is None
    assert fill.idle_after == 0 and fill.duty_cycle is None


def test_scale_shrinks_sizes_and_times_never_shape():
    full, small = compiled("rand-write-sustained"), compiled("rand-write-sustained", 0.01)
    for a, b in zip(measured(full), measured(small)):
        assert (a.iodepth, a.bs, a.rw) == (b.iodepth, b.bs, b.rw)
        assert b.size == 655 * MiB           # 64 GiB x 0.01, whole MiB
        assert b.io_size == 32 * GiB * 0.01 // (4 * KiB) * 4 * KiB
        assert b.runtime == 1.0              # 0.6 s raised to the 1 s floor
        assert b.idle_after == pytest.approx(0.6)


def test_scale_keeps_burst_count_and_floors_burst_size():
    step = measured(compiled("rand-write-burst", 0.01))[0]
    assert step.bursts == 32 and step.burst_bytes == MiB
    step = measured(compiled("seq-read-burst", 0.001))[0]
    assert step.bursts == 8 and step.burst_bytes == MiB and step.size == 256 * MiB


def test_scale_of_whole_drive_fill_has_a_floor_and_fits_the_target():
    assert measured(compiled("whole-drive-fill", 0.01, TB))[0].size == TB * 0.01 // MiB * MiB
    assert measured(compiled("whole-drive-fill", 0.0001, 100 * GiB))[0].size == GiB
    assert measured(compiled("whole-drive-fill", 0.01, 512 * MiB))[0].size == 512 * MiB


@pytest.mark.parametrize("factor", [0, -1, 1.5])
def test_scale_out_of_range_is_refused(factor):
    with pytest.raises(SsdlabError, match="--scale"):
        Scale(factor)


def test_a_span_larger_than_the_target_is_refused_with_advice():
    with pytest.raises(SsdlabError, match="smaller --scale or a larger target"):
        compiled("rand-read-sustained", capacity=32 * GiB)


def test_unknown_test_is_refused():
    with pytest.raises(SsdlabError, match="ssdlab tests"):
        compile_tests(["no-such-test"], Scale(1), TB)
