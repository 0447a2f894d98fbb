"""Model values: validation, percentiles from histograms, exact merging."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ssdlab.model import DirectionResult, Latency, Op, Step
from tests.factories import latency, result


def test_step_is_frozen_and_closed():
    step = Step(label="QD1", rw=Op.RANDREAD, bs=4096, size=1 << 30)
    with pytest.raises(ValidationError):
        step.bs = 8192
    with pytest.raises(ValidationError, match="extra"):
        Step(label="x", rw=Op.READ, bs=4096, size=1 << 30, colour="red")


@pytest.mark.parametrize("kwargs, message", [
    (dict(rw="randrw"), "rwmixread is required"),
    (dict(rw="read", rwmixread=50), "rwmixread is required"),
    (dict(rw="read", bs=1000), "multiple of 512"),
    (dict(rw="read", size=4096 + 100), "multiple of 512"),
    (dict(rw="read", bs=8192, size=4096), "smaller than one block"),
    (dict(rw="read", burst_bytes=1 << 20, duty_cycle=0.2), "io_size"),
    (dict(rw="read", burst_bytes=3 << 20, io_size=10 << 20, duty_cycle=0.2), "whole bursts"),
    (dict(rw="read", iodepth=0), "greater than or equal to 1"),
    (dict(rw="rw", rwmixread=101), "less than or equal to 100"),
])
def test_step_validation(kwargs, message):
    base = dict(label="x", bs=4096, size=1 << 20)
    with pytest.raises(ValidationError, match=message):
        Step(**{**base, **kwargs})


def test_percentiles_follow_fio_rule_first_bin_reaching_rank():
    lat = latency([1000] * 98 + [5000, 9000])
    assert (lat.p50_ns, lat.p99_ns, lat.p99_9_ns, lat.p99_99_ns) == (1000, 5000, 9000, 9000)
    assert lat.count == 100 and lat.max_ns == 9000 and lat.min_ns == 1000


def test_empty_latency_is_zero():
    assert Latency.from_histogram([], 0, 0, 0).count == 0


@given(st.lists(st.lists(st.integers(1, 10**9), min_size=1, max_size=50), min_size=1, max_size=5))
def test_merging_bursts_equals_measuring_them_together(parts):
    merged = Latency.merge(latency(p) for p in parts)
    together = latency([v for p in parts for v in p])
    assert merged.histogram == together.histogram
    assert (merged.p99_ns, merged.max_ns, merged.count) == (together.p99_ns, together.max_ns, together.count)
    assert merged.mean_ns == pytest.approx(together.mean_ns)


def test_direction_merge_sums_time_and_work():
    a = DirectionResult(ios=100, bytes=409600, busy_s=1.0, latency=latency([10]))
    b = DirectionResult(ios=300, bytes=1228800, busy_s=1.0, latency=latency([30]))
    m = DirectionResult.merge([a, b])
    assert (m.ios, m.iops, m.mbps) == (400, 200.0, pytest.approx(0.8192))


def test_step_result_throughput_excludes_trim_bytes():
    r = result(mbps=500.0, busy_s=2.0)
    assert r.mbps == pytest.approx(500.0, rel=1e-3)
    assert r.summary()["read"]["lat_us"]["p99"] == 90.0
