"""StepResult: what a backend returns for one step, identical from fio and the simulator.

Latencies are completion latencies in nanoseconds, kept as a histogram with
fio's log-linear bins so that results of several bursts merge exactly and any
percentile can be recomputed later.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ssdlab.units import mbps, per_second

PERCENTILES = (50.0, 99.0, 99.9, 99.99)


class Latency(BaseModel):
    """Latency of one direction, nanoseconds. `histogram` is ((bin_ns, count), ...) sorted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: int = Field(ge=0)
    mean_ns: float = Field(ge=0)
    min_ns: int = Field(ge=0)
    max_ns: int = Field(ge=0)
    p50_ns: int = Field(ge=0)
    p99_ns: int = Field(ge=0)
    p99_9_ns: int = Field(ge=0)
    p99_99_ns: int = Field(ge=0)
    histogram: tuple[tuple[int, int], ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> Latency:
        if self.count and not (self.min_ns <= self.p50_ns <= self.p99_ns <= self.p99_9_ns
                               <= self.p99_99_ns <= self.max_ns):
            raise ValueError("latency percentiles are not in order min <= p50 <= ... <= max")
        return self

    @classmethod
    def from_histogram(cls, bins: Iterable[tuple[int, int]], mean_ns: float,
                       min_ns: int, max_ns: int) -> Latency:
        """Percentiles from a histogram, as fio computes them: the first bin whose
        cumulative count reaches the rank, clamped to the observed min and max."""
        hist = tuple(sorted((int(v), int(c)) for v, c in bins if c > 0))
        count = sum(c for _, c in hist)
        if count == 0:
            return cls(count=0, mean_ns=0, min_ns=0, max_ns=0, p50_ns=0, p99_ns=0,
                       p99_9_ns=0, p99_99_ns=0)
        p = [clamped_percentile(hist, count, q, min_ns, max_ns) for q in PERCENTILES]
        return cls(count=count, mean_ns=mean_ns, min_ns=min_ns, max_ns=max_ns, p50_ns=p[0],
                   p99_ns=p[1], p99_9_ns=p[2], p99_99_ns=p[3], histogram=hist)

    def share_above(self, ns: int) -> float:
        """The share of the I/Os slower than `ns`, counted by their histogram's bins (fio's, each
        about 1.6 % wide, its value the middle of its range): a latency within about 1 % of
        `ns` may be counted on either side of it."""
        if not self.count:
            return 0.0
        return sum(count for value, count in self.histogram if value > ns) / self.count

    @classmethod
    def merge(cls, parts: Iterable[Latency]) -> Latency:
        parts = [p for p in parts if p.count]
        if not parts:
            return cls.from_histogram((), 0, 0, 0)
        merged: dict[int, int] = {}
        for part in parts:
            for value, n in part.histogram:
                merged[value] = merged.get(value, 0) + n
        count = sum(p.count for p in parts)
        mean = sum(p.mean_ns * p.count for p in parts) / count
        return cls.from_histogram(merged.items(), mean, min(p.min_ns for p in parts),
                                  max(p.max_ns for p in parts))


def clamped_percentile(hist: tuple[tuple[int, int], ...], count: int, q: float,
                       min_ns: int, max_ns: int) -> int:
    """A bin's value can lie outside what was observed; fio clamps it the same way."""
    return min(max(percentile_of(hist, count, q), min_ns), max_ns)


def percentile_of(hist: tuple[tuple[int, int], ...], count: int, q: float) -> int:
    rank = max(1, math.ceil(count * q / 100.0))
    seen = 0
    for value, n in hist:
        seen += n
        if seen >= rank:
            return value
    return hist[-1][0]


class DirectionResult(BaseModel):
    """Totals of one direction (read, write or trim) over the step's busy time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ios: int = Field(ge=0)
    bytes: int = Field(ge=0)
    busy_s: float = Field(ge=0, description="seconds the direction was being measured")
    latency: Latency

    @property
    def iops(self) -> float:
        return per_second(self.ios, self.busy_s)

    @property
    def mbps(self) -> float:
        return mbps(self.bytes, self.busy_s)

    @classmethod
    def merge(cls, parts: Iterable[DirectionResult]) -> DirectionResult:
        parts = list(parts)
        return cls(ios=sum(p.ios for p in parts), bytes=sum(p.bytes for p in parts),
                   busy_s=sum(p.busy_s for p in parts),
                   latency=Latency.merge(p.latency for p in parts))


def merged_directions(results: Iterable[StepResult]) -> dict[str, DirectionResult]:
    """Each direction that any of `results` has, their figures added up (histograms too)."""
    results = list(results)
    return {name: DirectionResult.merge(d for r in results if (d := getattr(r, name)))
            for name in ("read", "write", "trim") if any(getattr(r, name) for r in results)}


class SecondPoint(BaseModel):
    """Throughput over one interval of the step (normally one second); `t_s` is its end."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    t_s: float
    mbps: float = Field(ge=0)
    iops: float = Field(ge=0)


class GibPoint(BaseModel):
    """Throughput over one segment of a fill; `gib` is the amount written at its end (GiB)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    gib: float = Field(gt=0)
    mbps: float = Field(ge=0)


class BadBlock(BaseModel):
    """One block a read that checks the data found wrong or could not read."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    offset: int = Field(ge=0, description="bytes from the target's start")
    length: int | None = Field(default=None, ge=0, description="bytes; None when the engine does not say")
    kind: str = Field(description="checksum, zero_header, read_error... (backends/fio/verify.py); "
                                  "uncorrectable on a simulated drive")
    what: str = Field(description="the finding in words")


class Verification(BaseModel):
    """What a read that checks the data found (the retention test). On a real target: fio's check
    of the seeded pattern every block carries (backends/fio/verify.py). A simulated drive keeps
    no data: its check is whether every page decoded, and its failures are the page reads no
    decoding tier corrected, which a real drive returns as media errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    blocks_checked: int | None = Field(default=None, ge=0, description="read and checked; None: unknown")
    blocks_expected: int | None = Field(default=None, ge=0, description="the region's blocks")
    failed: int = Field(ge=0, description="blocks that differ or were unreadable (fio); page reads "
                                          "no tier corrected (the simulator)")
    kinds: dict[str, int] = Field(default_factory=dict, description="failures per kind")
    bad: tuple[BadBlock, ...] = Field(default=(), max_length=100, description="the first failures")
    ok: bool = Field(description="every block read and right, and every message of the engine understood")
    summary: str = Field(description="the finding in words")


class StepResult(BaseModel):
    """The measured outcome of one step, the same schema from every backend."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    started_at: str = Field(description="wall-clock start, ISO 8601 UTC")
    busy_s: float = Field(ge=0, description="seconds of I/O (sum over bursts)")
    idle_s: float = Field(ge=0, description="seconds the drive was left idle after I/O")
    bursts: int = Field(default=1, ge=1)
    read: DirectionResult | None = None
    write: DirectionResult | None = None
    trim: DirectionResult | None = None
    per_second: tuple[SecondPoint, ...] = ()
    per_gib: tuple[GibPoint, ...] = ()
    engine: str = Field(description="fio ioengine, or 'sim'")
    device: dict[str, float] | None = Field(
        default=None, description="the drive's internal counters (write amplification, cache "
                                  "use, GC), when the backend can see them: the simulator")
    notes: tuple[str, ...] = Field(default=(), description="warnings the engine printed")
    energy_j: float | None = Field(
        default=None, gt=0, description="joules the drive used over the busy time, when a power "
                                        "source knows it (a power meter, a power model)")
    verify: Verification | None = Field(
        default=None, description="a read that checked the data (the retention test's): what it found")
    repetitions: tuple[StepResult, ...] = Field(
        default=(), max_length=10, description="with `run --repeat N`: each run of the step, this "
                                               "result being all of them together")

    @property
    def directions(self) -> dict[str, DirectionResult]:
        return {name: d for name in ("read", "write", "trim")
                if (d := getattr(self, name)) is not None and d.ios}

    @property
    def ios(self) -> int:
        return sum(d.ios for d in self.directions.values())

    @property
    def bytes(self) -> int:
        return sum(d.bytes for name, d in self.directions.items() if name != "trim")

    @property
    def iops(self) -> float:
        return per_second(self.ios, self.busy_s)

    @property
    def mbps(self) -> float:
        """Read plus write throughput, MB/s (TRIM moves no data)."""
        return mbps(self.bytes, self.busy_s)

    @property
    def watts(self) -> float | None:
        """Mean power over the busy time; None when the energy is unknown."""
        return None if self.energy_j is None else per_second(self.energy_j, self.busy_s)

    @property
    def mbps_per_w(self) -> float | None:
        """Efficiency as reviews publish it: MB/s per W, i.e. megabytes per joule."""
        return None if self.energy_j is None else self.bytes / 1e6 / self.energy_j

    @property
    def kiops_per_w(self) -> float | None:
        """Thousands of I/Os per joule."""
        return None if self.energy_j is None else self.ios / 1e3 / self.energy_j

    def summary(self) -> dict:
        """The figures `show` and `export` print for the step."""
        out: dict = {"iops": round(self.iops, 1), "mbps": round(self.mbps, 2),
                     "busy_s": round(self.busy_s, 3), "idle_s": round(self.idle_s, 3),
                     "bursts": self.bursts, "started_at": self.started_at}
        if self.repetitions:
            out["repetitions"] = [{"iops": round(r.iops, 1), "mbps": round(r.mbps, 2)} for r in self.repetitions]
        if self.verify is not None:
            out["verify"] = {"failed": self.verify.failed, "ok": self.verify.ok, "summary": self.verify.summary}
        if self.energy_j is not None:
            out.update(energy_j=round(self.energy_j, 3), watts=round(self.watts, 3),
                       mbps_per_w=round(self.mbps_per_w, 3), kiops_per_w=round(self.kiops_per_w, 4))
        for name, d in self.directions.items():
            lat = d.latency
            out[name] = {
                "ios": d.ios, "bytes": d.bytes, "iops": round(d.iops, 1), "mbps": round(d.mbps, 2),
                "lat_us": {"mean": round(lat.mean_ns / 1e3, 2), "p50": lat.p50_ns / 1e3,
                           "p99": lat.p99_ns / 1e3, "p99.9": lat.p99_9_ns / 1e3,
                           "p99.99": lat.p99_99_ns / 1e3, "max": lat.max_ns / 1e3},
            }
        return out
