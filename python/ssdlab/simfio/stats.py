"""fio's statistics, computed from a simulated job: bandwidth and IOPS samples, the
spread of latencies, and the distributions fio prints (queue depths, latency ranges),
each with fio 3.33's arithmetic (stat.c, io_u.c).

Samples: fio takes one every `bwavgtime` (500 ms) of the job's wall time, from the bytes
and I/Os completed in that window, in whole KiB/s and I/Os per second; a direction
with no I/O in a window gets no sample, and the window in progress when the job ends
none either. The simulator's series is per second of drive time, so here a window is
a second. A mixed job's series counts both directions together: each window is split
by the job's share of each, which the random mix keeps to within a few percent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ssdlab.model import Latency

WINDOW_S = 1
# fio rounds a rate down; a share of a window's I/Os may come out a hair under a whole one
_EPSILON = 1e-9
DEPTH_LEVELS = (1, 2, 4, 8, 16, 32, 64)   # iodepth_level: from each depth up to the next
# latency_ns, latency_us: each range ends before its bound; latency_ms adds 2000 and above
LATENCY_BOUNDS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
LATENCY_MS_BOUNDS = (*LATENCY_BOUNDS, 2000)


@dataclass(frozen=True)
class Samples:
    """fio's io_stat of a series of samples: min, max, mean and the sample (n - 1) deviation."""

    values: tuple[int, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / self.n if self.values else 0.0

    @property
    def stddev(self) -> float:
        if self.n < 2:
            return 0.0
        mean = self.mean
        return math.sqrt(sum((v - mean) ** 2 for v in self.values) / (self.n - 1))


def window_ios(series: Iterable[tuple[float, float, float]], elapsed_s: float) -> list[float]:
    """I/Os completed in each whole window of the job's `elapsed_s`, from intervals
    (start, end, I/Os) of its time, each interval's I/Os spread evenly over it."""
    windows = [0.0] * int(elapsed_s // WINDOW_S)
    for start, end, ios in series:
        for w in range(int(start // WINDOW_S), min(math.ceil(end / WINDOW_S), len(windows))):
            overlap = min(end, (w + 1) * WINDOW_S) - max(start, w * WINDOW_S)
            if overlap > 0:
                windows[w] += ios * overlap / (end - start)
    return windows


def direction_samples(windows: list[float], share: float, bs: int) -> tuple[Samples, Samples]:
    """(bandwidth in KiB/s, IOPS) samples of the direction that did `share` of the I/Os."""
    ios = [w * share / WINDOW_S for w in windows if w * share > 0]
    return (Samples(tuple(math.floor(n * bs / 1024 + _EPSILON) for n in ios)),
            Samples(tuple(math.floor(n + _EPSILON) for n in ios)))


def latency_stddev(lat: Latency) -> float:
    """fio's sample deviation of the latencies, from the histogram's bins around the exact
    mean; a bin stands for latencies up to 1/64 away, so it is kept within what min, max
    and mean allow (the Bhatia-Davis bound)."""
    n, mean = lat.count, lat.mean_ns
    if n < 2:
        return 0.0
    spread = sum(c * (v - mean) ** 2 for v, c in lat.histogram) / (n - 1)
    bound = max((lat.max_ns - mean) * (mean - lat.min_ns), 0.0) * n / (n - 1)
    return math.sqrt(min(spread, bound))


def depth_levels(piece_ios: Iterable[int], depth: int) -> list[int]:
    """I/Os submitted at each of DEPTH_LEVELS: each piece's first I/Os find its queue
    filling (1, 2, ... depth - 1 in flight), the others find it full."""
    counts = [0] * len(DEPTH_LEVELS)
    for ios in piece_ios:
        filling = min(ios, depth - 1)
        for i, low in enumerate(DEPTH_LEVELS):
            high = DEPTH_LEVELS[i + 1] - 1 if i + 1 < len(DEPTH_LEVELS) else math.inf
            counts[i] += max(0, min(filling, high) - low + 1)
        counts[_level(depth)] += ios - filling
    return counts


def _level(depth: int) -> int:
    return max(i for i, low in enumerate(DEPTH_LEVELS) if depth >= low)


def latency_ranges(histograms: Iterable[tuple[tuple[int, int], ...]]) -> tuple[list[int], ...]:
    """I/Os per range of latency_ns, latency_us and latency_ms, by their bins' values."""
    ns, us, ms = ([0] * len(LATENCY_BOUNDS), [0] * len(LATENCY_BOUNDS),
                  [0] * (len(LATENCY_MS_BOUNDS) + 1))
    for histogram in histograms:
        for value, count in histogram:
            if value < 1000:
                ns[_range(value, LATENCY_BOUNDS)] += count
            elif value < 10**6:
                us[_range(value // 1000, LATENCY_BOUNDS)] += count
            else:
                ms[_range(value // 10**6, LATENCY_MS_BOUNDS)] += count
    return ns, us, ms


def _range(value: int, bounds: tuple[int, ...]) -> int:
    return next((i for i, bound in enumerate(bounds) if value < bound), len(bounds))


def percentages(counts: list[int], total: int, least: float) -> list[float]:
    """fio's percentages of `total`: one that is not 0 shows as at least `least`."""
    if not total:
        return [0.0] * len(counts)
    return [max(100.0 * c / total, least) if c else 0.0 for c in counts]
