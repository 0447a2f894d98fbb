"""The temperature sampler: reads on a schedule, none inside quiet(), per-second means, and
failing readings that are noted without ending the step's series."""

from __future__ import annotations

import threading
import time

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.telemetry.sampler import Sampler, TemperatureSampler, per_second

WAIT_S = 30  # only a bound on waiting for a slow machine, never a measure of speed


class CountingSource:
    """Records the (start, end) of every call; each call takes `busy_s`."""

    def __init__(self, busy_s: float = 0.0, values=None):
        self.calls: list[tuple[float, float]] = []
        self.busy_s = busy_s
        self.values = values
        self.called = threading.Condition()
        self.reading = False

    def __call__(self) -> float | None:
        start = time.monotonic()
        with self.called:
            self.reading = True
            self.called.notify_all()
        time.sleep(self.busy_s)
        value = 40.0 + len(self.calls) if self.values is None else self.values[len(self.calls)]
        with self.called:
            self.reading = False
            self.calls.append((start, time.monotonic()))
            self.called.notify_all()
        if isinstance(value, Exception):
            raise value
        return value

    def wait_for(self, condition) -> None:
        with self.called:
            assert self.called.wait_for(lambda: condition(self.calls), WAIT_S)

    def wait_for_a_read(self) -> None:
        with self.called:
            assert self.called.wait_for(lambda: self.reading, WAIT_S)


def test_no_read_inside_quiet():
    # quiet() is asked for while a 20 ms read is under way: it must wait for that read to
    # end, and no read may start until the block ends.
    source = CountingSource(busy_s=0.02)
    sampler = TemperatureSampler(source, period_s=0.001)
    sampler.start()
    for _ in range(3):
        source.wait_for_a_read()
        with sampler.quiet():
            entered = time.monotonic()
            time.sleep(0.05)
            left = time.monotonic()
        source.wait_for(lambda calls, left=left: calls[-1][0] > left)  # sampling resumed
        assert all(end <= entered or start >= left for start, end in source.calls)
    readings = sampler.stop()
    assert len(readings.samples) == len(source.calls) and readings.notes == ()


def test_nested_quiet_windows():
    source = CountingSource()
    sampler = Sampler(source, period_s=0.001)
    sampler.start()
    source.wait_for(lambda calls: len(calls) >= 1)
    with sampler.quiet():
        with sampler.quiet():
            pass
        entered = time.monotonic()
        time.sleep(0.02)
        left = time.monotonic()
    sampler.stop()
    assert all(end <= entered or start >= left for start, end in source.calls)


def test_samples_are_timed_from_start_and_none_is_skipped():
    source = CountingSource(values=[41.0, None, 43.0, None, None, 46.0] + [None] * 10**6)
    sampler = TemperatureSampler(source, period_s=0.001)
    sampler.start()
    source.wait_for(lambda calls: len(calls) >= 6)
    samples = sampler.stop().samples
    assert [c for _, c in samples] == [41.0, 43.0, 46.0]
    times = [t for t, _ in samples]
    assert 0 <= times[0] < times[1] < times[2]


def test_a_failing_reading_is_noted_once_and_sampling_goes_on():
    failure = SsdlabError("nvme smart-log failed: no such device")
    source = CountingSource(values=[40.0, failure, failure, 43.0, 44.0] + [45.0] * 10**5)
    sampler = TemperatureSampler(source, period_s=0.001)
    sampler.start()
    source.wait_for(lambda calls: len(calls) >= 5)
    readings = sampler.stop()
    assert [c for _, c in readings.samples][:3] == [40.0, 43.0, 44.0]
    assert len(readings.notes) == 1
    assert readings.notes[0].startswith(f"temperature sampling: 2 of {len(source.calls)} readings failed, the first ")
    assert readings.notes[0].endswith(" s into the step: nvme smart-log failed: no such device")


def test_a_bug_in_the_source_reaches_stop():
    sampler = TemperatureSampler(lambda: 1 / 0, period_s=0.001)
    sampler.start()
    with pytest.raises(ZeroDivisionError):
        sampler.stop()


def test_a_sampler_runs_again_after_stop():
    source = CountingSource()
    sampler = TemperatureSampler(source, period_s=0.001)
    for _ in range(2):
        sampler.start()
        source.wait_for(lambda calls: len(calls) >= 1)
        assert sampler.stop().samples
        source.calls.clear()
    with pytest.raises(RuntimeError, match="not started"):
        sampler.stop()


@pytest.mark.parametrize("period_s", [0, -1, 1.5])
def test_temperature_is_sampled_at_least_once_a_second(period_s):
    with pytest.raises(ValueError):
        TemperatureSampler(lambda: 40.0, period_s=period_s)


def test_per_second_means():
    samples = [(0.1, 40.0), (0.6, 42.0), (1.2, 50.0), (3.5, 60.0), (4.1, 62.0), (-0.1, 0.0), (4.7, 0.0)]
    assert per_second(samples, 4.2) == (41.0, 50.0, None, 61.0)  # 4.1 joins the last second
    assert per_second(samples, 4.6) == (41.0, 50.0, None, 60.0, 62.0)  # the part-second stands alone
    assert per_second(samples, 0.3) == (40.0,)
    assert per_second(samples, 0) == ()
    assert per_second([], 2.0) == (None, None)
