"""Built-in synthetic traces: `destroyer-like`, `heavy-like` and `light-like`, and variants.

No public trace ships with ssdlab (METHODOLOGY.md section 6: MSR's licence reserves
reproduction). These are synthetic and seeded, shaped after the published figures of the
reviews' three traces that METHODOLOGY.md section 6 tabulates (totals read and written,
mean queue depth, the light trace's share of I/O at QD1) and after what it says of client
traces in general ("requests are small on average (7-26 KiB, about half reads), bursty,
with much idle time; locality follows a skewed distribution (zipf or zoned)"). They are
not the reviews' traces: every other figure below is an estimate, marked as such with its
reason, and a trace's order, addresses and timing are a random draw.

What a trace is made of (`TraceSpec`):

- Requests of two kinds. Random requests take a size from `random_sizes` (by count) and
  a place from the locality law. Sequential runs are `sequential_size` requests at
  consecutive offsets, `run_bytes` long on average (geometric), starting anywhere in the
  footprint. `sequential_share` is the share of all bytes in runs; reads and writes get
  their own sequential shares, solved (`sequential_split`) so that reads are `read_share`
  of the requests by count with the totals read and written as stated.
- Locality: a bounded zipf law of exponent `theta` over the footprint's 1 MiB regions, the
  hottest scattered over it by an affine permutation; or zones as fio's
  `random_distribution=zoned` has them (a share of accesses in a share of the footprint,
  in address order).
- Arrivals in clusters: the requests of a cluster arrive at the same µs. A drive much
  faster than the arrivals serves each cluster before the next arrives, so a request's
  queue depth is its cluster's size: the stated mean queue depth (`mean_qd`) is the mean
  over requests of the size of their cluster, and `qd1_share` the share of requests that
  arrive alone. Replayed in time on a real or simulated drive, the queue depth is the
  drive's doing: deeper where it is slower than the arrivals.
- Bursts: clusters come in bursts of `burst_requests` requests on average (geometric),
  separated by idle gaps over 25 ms (the cap METHODOLOGY.md section 6 puts on idle time
  in replay, and what `trace stats` counts as idle) that take `idle_share` of the
  `duration_s`; within a burst, gaps are under 25 ms.

`--scale` multiplies the totals and the duration (so rates, burst and gap lengths stay),
not the footprint nor the device. Generation streams numpy chunks of prepared.RECORD (about
prepared.CHUNK records each) from one numpy Generator seeded with the seed: the same spec,
scale and seed give the same trace (with the same numpy), another seed another trace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.traces import prepared
from ssdlab.traces.prepared import OP_CODE
from ssdlab.traces.record import MAX_END, Op
from ssdlab.traces.stats import IDLE_GAP_US
from ssdlab.units import GB, KiB, MiB, parse_size

BLOCK = 4096  # every offset and length is whole 4 KiB blocks, the logical block of client drives
REGION = MiB  # the unit of locality: a zipf rank or a zone picks one of these
MIN_FOOTPRINT = 64 * MiB
# Estimate: the reviews' traces were recorded on SATA drives, whose AHCI queue holds 32
# commands; no cluster is larger.
MAX_QD = 32
# Estimate: a run is cut at 8192 requests (1 GiB at 128 KiB), so one chunk stays small.
MAX_RUN_REQUESTS = 8192
# Estimate: within a burst, a gap between clusters is at least a fifth of the mean gap
# (the rest exponential): a request that arrives alone is not on the heels of the last.
GAP_FLOOR = 0.2
# Estimate: idle gaps are 25 ms plus a lognormal of this sigma (heavy-tailed, as idle
# periods of desktop use are: most short, a few of minutes).
IDLE_SIGMA = 1.0
MIN_GAP_US = 5.0  # mean gap in a burst: closer arrivals would merge clusters at the µs
MAX_GAP_US = IDLE_GAP_US / 5  # and farther ones would not be a burst
SCALES = (1e-6, 10.0)
MAX_SEED = (1 << 63) - 1
DEFAULT_SEED = 0
NOT_THE_REVIEWS = ("Synthetic and seeded, generated from published figures of the reviews' traces: not the "
                   "reviews' traces, whose requests, addresses and timing are not public.")


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class SizeShare(_Part):
    size: int = Field(ge=BLOCK, le=REGION, multiple_of=BLOCK, description="bytes")
    share: float = Field(gt=0, le=1, description="of the random requests, by count")


class Zipf(_Part):
    kind: Literal["zipf"] = "zipf"
    theta: float = Field(gt=0, le=5, description="exponent: a region of rank r is hit as often as r^-theta")


class Zone(_Part):
    access: float = Field(gt=0, le=1, description="share of the random requests")
    span: float = Field(gt=0, le=1, description="share of the footprint, in address order")


class Zones(_Part):
    kind: Literal["zones"] = "zones"
    zones: tuple[Zone, ...] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _whole(self) -> Zones:
        for what, total in (("accesses", sum(z.access for z in self.zones)),
                            ("spans", sum(z.span for z in self.zones))):
            if abs(total - 1) > 1e-6:
                raise ValueError(f"the zones' {what} must add up to 100 %, not {total:.4%}")
        return self


Locality = Annotated[Zipf | Zones, Field(discriminator="kind")]


class TraceSpec(_Part):
    """A synthetic trace's figures, at scale 1."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    about: str = Field(max_length=2000, description="what the trace is, and what it is not")
    read_bytes: int = Field(ge=0, le=10**16)
    write_bytes: int = Field(ge=0, le=10**16)
    read_share: float = Field(ge=0, le=1, description="reads' share of the requests, by count")
    sequential_share: float = Field(ge=0, le=1, description="share of the bytes in sequential runs")
    random_sizes: tuple[SizeShare, ...] = Field(min_length=1, max_length=32)
    sequential_size: int = Field(ge=BLOCK, le=8 * MiB, multiple_of=BLOCK, description="a run's request, bytes")
    run_bytes: int = Field(ge=BLOCK, le=1 << 40, description="a sequential run's mean length, bytes")
    mean_qd: float = Field(ge=1, le=MAX_QD, description="mean over requests of their cluster's size")
    qd1_share: float | None = Field(default=None, ge=0, lt=1, description="share of requests arriving alone")
    locality: Locality
    footprint: int = Field(ge=MIN_FOOTPRINT, le=MAX_END, description="bytes the trace's addresses span")
    idle_share: float = Field(ge=0, le=0.99, description="share of the duration in gaps over 25 ms")
    burst_requests: int = Field(ge=2, le=10**9, description="mean requests between idle gaps")
    duration_s: float = Field(gt=0, le=1e8, description="from the first issue to the last, at scale 1")
    device_size: int = Field(default=10**12, ge=MIN_FOOTPRINT, le=MAX_END,
                             description="the drive the trace addresses, bytes")

    @model_validator(mode="after")
    def _consistent(self) -> TraceSpec:
        if self.read_bytes + self.write_bytes == 0:
            raise ValueError("a trace must read or write something: read_bytes and write_bytes are both 0")
        total = sum(s.share for s in self.random_sizes)
        if abs(total - 1) > 1e-6:
            raise ValueError(f"the random request sizes' shares must add up to 100 %, not {total:.4%}")
        if len({s.size for s in self.random_sizes}) < len(self.random_sizes):
            raise ValueError("a random request size is given twice")
        if self.qd1_share is not None:
            rest = self.rest_qd()
            if not 2 <= rest <= MAX_QD:
                raise ValueError(f"a mean queue depth of {self.mean_qd:g} with {self.qd1_share:.0%} of requests at "
                                 f"QD1 needs the others at a mean depth of {rest:.3g}, outside 2 to {MAX_QD}")
        if self.run_bytes < self.sequential_size:
            raise ValueError(f"a sequential run ({self.run_bytes} bytes) is shorter than one of its requests "
                             f"({self.sequential_size} bytes)")
        return self

    def rest_qd(self) -> float:
        """The mean queue depth of the requests that do not arrive alone (with qd1_share)."""
        share = self.qd1_share or 0.0
        return (self.mean_qd - share) / (1 - share)

    def mean_random_size(self) -> float:
        return sum(s.size * s.share for s in self.random_sizes)

    def mean_size(self) -> float:
        """Bytes per request, over all requests."""
        return 1 / (self.sequential_share / self.sequential_size + (1 - self.sequential_share) /
                    self.mean_random_size())

    def footprint_used(self) -> int:
        """The footprint on this device: at most the device, whole regions."""
        return min(self.footprint, self.device_size) // REGION * REGION

    def read_shares(self) -> tuple[float, float]:
        """The reads' shares of the requests by count that the totals, sizes and sequential
        share allow (see `sequential_split`)."""
        total_bytes = self.read_bytes + self.write_bytes
        sequential = self.sequential_share * total_bytes
        cut = self._cut()
        whole = total_bytes / cut - sequential
        reads = self.read_bytes / cut
        low = (reads - min(self.read_bytes, sequential)) / whole
        high = (reads - max(0.0, sequential - self.write_bytes)) / whole
        return max(0.0, low), min(1.0, high)

    def sequential_split(self) -> tuple[float, float]:
        """Bytes read and written in sequential runs. With m the mean random size and q the
        sequential size, an op of B bytes of which x sequential takes B/m - x (1/m - 1/q)
        requests: reads are read_share of all requests when
        x_read = ((1 - r) R - r W) / (1 - m/q) + r X, X = sequential_share (R + W)."""
        total_bytes = self.read_bytes + self.write_bytes
        sequential = self.sequential_share * total_bytes
        r = self.read_share
        low, high = self.read_shares()
        if not low - 1e-9 <= r <= high + 1e-9:
            raise SsdlabError(
                f"{self.name}: reads cannot be {r:.1%} of the requests with {self.read_bytes / GB:.4g} GB read, "
                f"{self.write_bytes / GB:.4g} GB written, {self.sequential_share:.0%} of the bytes sequential and "
                f"these request sizes: between {low:.1%} and {high:.1%} can")
        reads = ((1 - r) * self.read_bytes - r * self.write_bytes) / self._cut() + r * sequential
        reads = min(max(reads, max(0.0, sequential - self.write_bytes)), min(float(self.read_bytes), sequential))
        return reads, sequential - reads

    def _cut(self) -> float:
        return 1 - self.mean_random_size() / self.sequential_size if self.sequential_share else 1.0

    def stated(self) -> dict[str, object]:
        """The trace's figures at scale 1, for `trace list`."""
        return {"name": self.name, "about": self.about, "read_bytes": self.read_bytes,
                "write_bytes": self.write_bytes, "mean_qd": self.mean_qd, "qd1_share": self.qd1_share,
                "read_share": self.read_share, "sequential_share": self.sequential_share,
                "mean_request_bytes": self.mean_size(),
                "requests": round((self.read_bytes + self.write_bytes) / self.mean_size()),
                "locality": self.locality.model_dump(), "footprint": self.footprint,
                "idle_share": self.idle_share, "duration_s": self.duration_s, "device_size": self.device_size}

    def changed(self, changes: dict[str, object], names: dict[str, str] | None = None) -> TraceSpec:
        """This spec with `changes`, validated; an SsdlabError in the user's terms, its
        fields called by `names` (the command line's options) where given."""
        try:
            return TraceSpec.model_validate({**self.model_dump(), **changes})
        except ValidationError as exc:
            problems = validation_problems(exc)
            for field, name in (names or {}).items():  # the longest first: locality.zipf before locality
                problems = re.sub(rf"\b{re.escape(field)}\b", name, problems)
            raise SsdlabError(f"{self.name}: {problems}") from None


def _sizes(*pairs: tuple[int, float]) -> tuple[SizeShare, ...]:
    return tuple(SizeShare(size=size * KiB, share=share) for size, share in pairs)


BUILTIN: dict[str, TraceSpec] = {spec.name: spec for spec in (
    TraceSpec(
        name="destroyer-like",
        about="Shaped after the reviews' heaviest trace: 1583 GB read, 876 GB written, mean QD about 5.5, mostly "
              "sequential transfer by bytes. " + NOT_THE_REVIEWS,
        # METHODOLOGY.md section 6, table: 1583 GB read, 876 GB written, mean QD about 5.5
        read_bytes=1583 * GB, write_bytes=876 * GB, mean_qd=5.5,
        read_share=0.5,  # METHODOLOGY.md section 6: "about half reads"
        # "mostly sequential transfer by bytes" (METHODOLOGY.md section 6): estimate 60 %, more than half
        # while keeping the mean request (24.9 KiB) within the 7-26 KiB of client traces
        sequential_share=0.6,
        # Estimate: mostly 4 KiB, as client random I/O is, up to 64 KiB (mean 11.3 KiB)
        random_sizes=_sizes((4, 0.60), (8, 0.15), (16, 0.12), (32, 0.08), (64, 0.05)),
        sequential_size=128 * KiB,  # estimate: a common largest transfer of client file copies
        run_bytes=32 * MiB,  # estimate: large file copies and installs
        locality=Zipf(theta=0.99),  # estimate: YCSB's usual skew; the reviews publish none
        footprint=600 * GB,  # estimate: much of a 1 TB drive, not all of it
        idle_share=0.8,  # estimate: "much idle time" (METHODOLOGY.md section 6)
        # Estimates: 10 h, so that busy periods ask some hundreds of MB/s, which fast SATA
        # drives served; bursts of 4096 requests, idle gaps then average 1.2 s
        duration_s=10 * 3600, burst_requests=4096),
    TraceSpec(
        name="heavy-like",
        about="Shaped after the reviews' heavy trace: 48.6 GB read, 106.3 GB written, mean QD about 4.6, "
              "write-heavy, does not fill a 1 TB drive. " + NOT_THE_REVIEWS,
        # METHODOLOGY.md section 6, table: 48.6 GB read, 106.3 GB written, mean QD about 4.6
        read_bytes=48_600_000_000, write_bytes=106_300_000_000, mean_qd=4.6,
        # "about half reads" (METHODOLOGY.md section 6): estimate 40 %, near the most these
        # totals allow (43 %) with reads mostly random
        read_share=0.4,
        sequential_share=0.3,  # estimate: some file copies among desktop work
        # Estimate: mostly 4 KiB, as client random I/O is, up to 64 KiB (mean 9.9 KiB)
        random_sizes=_sizes((4, 0.65), (8, 0.15), (16, 0.10), (32, 0.06), (64, 0.04)),
        sequential_size=128 * KiB,  # estimate: a common largest transfer of client file copies
        run_bytes=8 * MiB,  # estimate: files of some MB
        locality=Zipf(theta=0.99),  # estimate: YCSB's usual skew; the reviews publish none
        # "does not fill a 1 TB drive" (METHODOLOGY.md section 6): estimate 160 GB, more than it writes
        footprint=160 * GB,
        idle_share=0.8,  # estimate: "much idle time" (METHODOLOGY.md section 6)
        # Estimates: 2 h, busy periods asking about 100 MB/s; bursts of 2048 requests
        duration_s=2 * 3600, burst_requests=2048),
    TraceSpec(
        name="light-like",
        about="Shaped after the reviews' light trace: 18 GB read, 23.3 GB written, mean QD about 4.6 with 73 % "
              "of I/Os at QD1. " + NOT_THE_REVIEWS,
        # METHODOLOGY.md section 6, table: 18 GB read, 23.3 GB written, mean QD about 4.6, 73 % of I/Os at QD1
        read_bytes=18 * GB, write_bytes=23_300_000_000, mean_qd=4.6, qd1_share=0.73,
        read_share=0.5,  # METHODOLOGY.md section 6: "about half reads"
        sequential_share=0.2,  # estimate: a light desktop day copies little
        # Estimate: mostly 4 KiB, as client random I/O is, up to 64 KiB (mean 8.9 KiB)
        random_sizes=_sizes((4, 0.70), (8, 0.12), (16, 0.10), (32, 0.05), (64, 0.03)),
        sequential_size=128 * KiB,  # estimate: a common largest transfer of client file copies
        run_bytes=4 * MiB,  # estimate: small files
        locality=Zipf(theta=0.99),  # estimate: YCSB's usual skew; the reviews publish none
        footprint=48 * GB,  # estimate: more than it writes, a small part of the drive
        idle_share=0.9,  # estimate: "much idle time" (METHODOLOGY.md section 6), more for a light day
        # Estimates: 2 h, busy periods asking about 60 MB/s; bursts of 512 requests
        duration_s=2 * 3600, burst_requests=512),
)}


def builtin(name: str) -> TraceSpec:
    try:
        return BUILTIN[name]
    except KeyError:
        raise SsdlabError(f"unknown built-in trace {name!r}: the built-in traces are "
                          f"{', '.join(BUILTIN)} (`ssdlab trace list`)") from None


def variant(spec: TraceSpec, changes: dict[str, object],
            names: dict[str, str] | None = None) -> tuple[TraceSpec, list[str]]:
    """`spec` with the user's `changes`, and notes on what else changed: where the
    changes leave the spec's read share out of reach and no read share is among them, the
    nearest one that is."""
    changed = spec.changed(changes, names)
    notes = []
    if "read_share" not in changes:
        low, high = changed.read_shares()
        share = min(max(changed.read_share, low), high)
        if share != changed.read_share:
            notes.append(f"reads are {share:.1%} of the requests, not {changed.read_share:.1%}: the most these "
                         f"totals, sizes and sequential share allow")
            changed = changed.changed({"read_share": share}, names)
    return changed, notes


def parse_sizes(text: str) -> tuple[SizeShare, ...]:
    """Random request sizes with their shares by count in percent: `4k:60,8k:25,64k:15`."""
    try:
        pairs = [part.split(":") for part in text.split(",")]
        return tuple(SizeShare(size=parse_size(size), share=float(share) / 100) for size, share in pairs)
    except (ValueError, ValidationError) as exc:
        detail = validation_problems(exc) if isinstance(exc, ValidationError) else str(exc)
        raise SsdlabError(f"request sizes {text!r}: write SIZE:PERCENT pairs, comma-separated, such as "
                          f"4k:60,8k:25,64k:15, each size whole 4 KiB blocks up to 1 MiB ({detail})") from None


def parse_zones(text: str) -> Zones:
    """Zones as fio's `random_distribution=zoned` writes them: `60/10,30/20,10/70`, each
    the percent of accesses in the percent of the footprint."""
    try:
        pairs = [part.split("/") for part in text.split(",")]
        return Zones(zones=tuple(Zone(access=float(a) / 100, span=float(b) / 100) for a, b in pairs))
    except (ValueError, ValidationError) as exc:
        detail = validation_problems(exc) if isinstance(exc, ValidationError) else str(exc)
        raise SsdlabError(f"zones {text!r}: write ACCESS/SPAN percent pairs, comma-separated, such as "
                          f"60/10,30/20,10/70 (60 % of the accesses in the first 10 % of the footprint...), "
                          f"each adding up to 100 ({detail})") from None


def check_scale(scale: float) -> float:
    low, high = SCALES
    if not (math.isfinite(scale) and low <= scale <= high):
        raise SsdlabError(f"a trace's scale must be from {low:g} to {high:g}, not {scale:g}")
    return scale


def check_seed(seed: int) -> int:
    if not 0 <= seed <= MAX_SEED:
        raise SsdlabError(f"a seed must be a whole number from 0 to {MAX_SEED}, not {seed}")
    return seed


def cluster_law(spec: TraceSpec) -> np.ndarray:
    """P(a request's cluster has k requests), k = 1..MAX_QD (index k - 1), by request:
    geometric weights (a^k) on 2..MAX_QD with the mean of the requests not alone and
    `qd1_share` at 1, or on 1..MAX_QD with the mean queue depth."""
    law = np.zeros(MAX_QD)
    if spec.qd1_share is None:
        law[:] = _geometric(1, spec.mean_qd)
    else:
        law[0] = spec.qd1_share
        law[1:] = (1 - spec.qd1_share) * _geometric(2, spec.rest_qd())[1:]
    return law


def _geometric(first: int, mean: float) -> np.ndarray:
    """Weights a^k on first..MAX_QD (zero below), summing to 1, whose mean is `mean`."""
    k = np.arange(1, MAX_QD + 1, dtype=float)
    live = k >= first

    def law(log_a: float) -> np.ndarray:
        w = np.where(live, np.exp(log_a * (k - first) - max(0.0, log_a) * (MAX_QD - first)), 0.0)
        return w / w.sum()

    if mean <= first + 1e-9:
        return np.where(k == first, 1.0, 0.0)
    if mean >= MAX_QD - 1e-9:
        return np.where(k == MAX_QD, 1.0, 0.0)
    low, high = -50.0, 50.0
    for _ in range(100):
        mid = (low + high) / 2
        if (law(mid) * k).sum() < mean:
            low = mid
        else:
            high = mid
    return law((low + high) / 2)


class Generator:
    """A synthetic trace at a scale and seed: `chunks()` yields its records."""

    def __init__(self, spec: TraceSpec, scale: float = 1.0, seed: int = DEFAULT_SEED) -> None:
        self.spec, self.scale, self.seed = spec, check_scale(scale), check_seed(seed)
        read_seq, write_seq = spec.sequential_split()
        # bytes per class: random reads, random writes, sequential reads, sequential writes
        self.budgets = np.array([spec.read_bytes - read_seq, spec.write_bytes - write_seq, read_seq, write_seq]) * scale
        self.budgets[self.budgets < 1] = 0  # rounding's leftovers
        self.ops = np.array([OP_CODE[Op.READ], OP_CODE[Op.WRITE]] * 2, dtype=np.uint8)
        # the random sizes, then the sequential one (a sequential request's size index)
        self.sizes = np.array([s.size for s in spec.random_sizes] + [spec.sequential_size], dtype=np.uint64)
        self.size_law = _Law(np.array([s.share for s in spec.random_sizes]))
        self.places = ((REGION - self.sizes.astype(np.int64)) // BLOCK + 1).astype(np.float32)  # in a region
        self.footprint = spec.footprint_used()
        self.regions = self.footprint // REGION
        q = spec.sequential_size
        self.run_cap = max(1, min(MAX_RUN_REQUESTS, self.footprint // q))
        self.run_p = min(1.0, q / spec.run_bytes)  # a run's length in requests is geometric of mean 1/p
        run_mean = (1 - (1 - self.run_p) ** self.run_cap) / self.run_p  # E[min(G, cap)]
        request_bytes = np.array([spec.mean_random_size()] * 2 + [q * run_mean] * 2)
        self.segment_weights = self.budgets / request_bytes  # expected segments (requests, runs) per class
        self.segment_requests = np.array([1.0, 1.0, run_mean, run_mean])
        self.requests = float((self.budgets / np.array([spec.mean_random_size()] * 2 + [q] * 2)).sum())
        law = cluster_law(spec)
        by_cluster = law / np.arange(1, MAX_QD + 1)
        self.cluster_mean = 1 / by_cluster.sum()  # requests per cluster, over clusters
        self.cluster_law = _Law(by_cluster)
        self._timing(spec)
        if spec.locality.kind == "zipf":
            self._zipf_a = _coprime(self.regions)
        else:
            spans = np.array([z.span for z in spec.locality.zones])
            edges = np.round(np.concatenate([[0.0], np.cumsum(spans) / spans.sum()]) * self.regions).astype(np.int64)
            self._zone_starts = np.minimum(edges[:-1], self.regions - 1).astype(np.uint64)
            self._zone_widths = np.maximum(1, edges[1:] - edges[:-1].clip(max=self.regions - 1))
            self._zone_law = _Law(np.array([z.access for z in spec.locality.zones]))

    def _timing(self, spec: TraceSpec) -> None:
        clusters = max(1.0, self.requests / self.cluster_mean)
        duration_us = spec.duration_s * self.scale * 1e6
        self.idle_p = min(1.0, self.cluster_mean / spec.burst_requests) if spec.idle_share else 0.0
        idle_gaps = clusters * self.idle_p
        self.idle_mean_us = spec.idle_share * duration_us / idle_gaps if idle_gaps else 0.0
        self.gap_mean_us = (1 - spec.idle_share) * duration_us / max(1.0, clusters - idle_gaps)
        where = (f"{spec.name}: {spec.duration_s * self.scale:g} s with {spec.idle_share:.0%} idle over about "
                 f"{self.requests:.3g} requests in bursts of {spec.burst_requests}")
        if self.idle_p and self.idle_mean_us <= IDLE_GAP_US:
            raise SsdlabError(f"{where} would have idle gaps of {self.idle_mean_us / 1000:.3g} ms on average, not over "
                              f"the {IDLE_GAP_US // 1000} ms that make a gap idle: lengthen the duration or the "
                              "bursts, or raise the idle share")
        if not MIN_GAP_US <= self.gap_mean_us <= MAX_GAP_US:
            raise SsdlabError(f"{where} would leave {self.gap_mean_us:.3g} µs between arrivals in a burst, outside "
                              f"{MIN_GAP_US:g} to {MAX_GAP_US:g} µs: change the duration or the idle share")

    def chunks(self) -> Iterator[np.ndarray]:
        """The trace's records in issue order, about prepared.CHUNK at a time."""
        rng = np.random.default_rng(self.seed)
        state = _State(self.budgets.copy(), int(rng.integers(self.regions)))
        while (state.remaining > 0).any():
            chunk = self._chunk(rng, state)
            if len(chunk):
                yield chunk

    def _chunk(self, rng: np.random.Generator, state: _State) -> np.ndarray:
        remaining = state.remaining
        live = remaining > 0
        weights = self.segment_weights * live
        weights /= weights.sum()
        segments = max(16, int(prepared.CHUNK / float((weights * self.segment_requests).sum())))
        # Each segment: a random request or a sequential run, of a class. A request's
        # offset is its segment's plus its place in it times the sequential size (0 for
        # a random request, the only one of its segment).
        kind = _Law(weights).draw(rng, segments)
        runs = kind >= 2
        lengths = np.ones(segments, dtype=np.int64)
        lengths[runs] = np.minimum(rng.geometric(self.run_p, int(runs.sum())), self.run_cap)
        size_index = np.where(runs, len(self.sizes) - 1, self.size_law.draw(rng, segments))
        q = self.spec.sequential_size
        where = self._random_offsets(rng, size_index, state.zipf_b)
        # a run's place: anywhere in the footprint that holds it, aligned to its requests
        run_lengths = lengths[runs]
        where[runs] = (rng.random(len(run_lengths)) * ((self.footprint - run_lengths * q) // q + 1)
                       ).astype(np.uint64) * np.uint64(q)
        ends = np.cumsum(lengths)
        n = int(ends[-1])
        segment = _repeat_index(ends)
        keep = self._spend(kind, size_index, lengths, segment, remaining)
        # each request's offset: its segment's, then q further for each request of a run, as
        # the cumulative of the steps between consecutive requests (in uint64, modulo 2^64)
        steps = np.full(n, q, dtype=np.uint64)
        steps[0] = where[0]
        steps[ends[:-1]] = where[1:] - (where[:-1] + (lengths[:-1] - 1).astype(np.uint64) * np.uint64(q))
        offset = np.cumsum(steps)
        if keep is not None:
            segment, offset = segment[keep], offset[keep]
            n = len(segment)
        chunk = prepared.empty(n)
        if n:
            chunk["op"] = self.ops[kind][segment]
            chunk["offset"] = offset
            chunk["length"] = self.sizes[size_index][segment]
            chunk["time_us"] = self._times(rng, n, state)
        return chunk

    def _spend(self, kind: np.ndarray, size_index: np.ndarray, lengths: np.ndarray, segment: np.ndarray,
               remaining: np.ndarray) -> np.ndarray | None:
        """Take the chunk's bytes from each class's budget; where a budget runs out, the
        requests of its class from there on are left out: the mask of those kept (by
        request), or None."""
        width = len(self.sizes)
        key = kind.astype(np.intp) * width + size_index
        requests = np.bincount(key, weights=lengths, minlength=4 * width).reshape(4, width)
        spent = requests @ self.sizes.astype(float)
        if ((spent < remaining) | (spent == 0)).all():
            remaining -= spent
            return None
        cls = kind[segment]
        sizes_of = self.sizes[size_index][segment]
        keep = np.ones(len(segment), dtype=bool)
        for c in range(4):
            if spent[c] < remaining[c] or spent[c] == 0:
                remaining[c] -= spent[c]
                continue
            mine = cls == c
            sizes = sizes_of[mine]
            before = np.cumsum(sizes) - sizes
            kept = before < remaining[c]
            keep[mine] = kept
            remaining[c] = min(remaining[c] - float(sizes[kept].sum()), 0.0)  # spent
        return keep

    def _random_offsets(self, rng: np.random.Generator, size_index: np.ndarray, zipf_b: int) -> np.ndarray:
        """Offsets of random requests: a region of the locality law, a place in it that
        holds the request (whole blocks)."""
        n = len(size_index)
        if self.spec.locality.kind == "zipf":
            rank = _zipf_ranks(rng.random(n, dtype=np.float32), self.regions, self.spec.locality.theta)
            region = (rank * np.uint64(self._zipf_a) + np.uint64(zipf_b)) % np.uint64(self.regions)
        else:
            zone = self._zone_law.draw(rng, n)
            region = self._zone_starts[zone] + (rng.random(n) * self._zone_widths[zone]).astype(np.uint64)
        within = (rng.random(n, dtype=np.float32) * self.places[size_index]).astype(np.uint64) * np.uint64(BLOCK)
        return region * np.uint64(REGION) + within

    def _times(self, rng: np.random.Generator, n: int, state: _State) -> np.ndarray:
        """Issue times of `n` requests: clusters of the cluster law, gaps of the burst law."""
        draws = int(n / self.cluster_mean * 1.1) + 64
        sizes = self.cluster_law.draw(rng, draws) + 1
        while sizes.sum() < n:
            sizes = np.concatenate([sizes, self.cluster_law.draw(rng, draws) + 1])
        bounds = np.cumsum(sizes)
        clusters = int(np.searchsorted(bounds, n)) + 1  # the last one cut at the chunk's end
        # gaps in whole µs, drawn in float32 (twice as fast), added up exactly
        idle = rng.random(clusters, dtype=np.float32) < self.idle_p
        gaps = np.minimum(np.float32(self.gap_mean_us) * (np.float32(GAP_FLOOR) + np.float32(1 - GAP_FLOOR) *
                                                          rng.standard_exponential(clusters, dtype=np.float32)),
                          np.float32(IDLE_GAP_US - 0.5)) + np.float32(0.5)
        gaps = gaps.astype(np.int64)  # rounded, at most 25 ms: not idle
        if idle.any():
            spread = rng.lognormal(-IDLE_SIGMA ** 2 / 2, IDLE_SIGMA, int(idle.sum()))  # mean 1
            gaps[idle] = IDLE_GAP_US + 1 + (self.idle_mean_us - IDLE_GAP_US - 1) * spread
        if state.first:
            gaps[0] = 0
            state.first = False
        # each request's time: the sum of the gaps before its cluster (faster than np.repeat)
        steps = np.zeros(n, dtype=np.int64)
        steps[0] = state.clock_us + gaps[0]
        steps[bounds[:clusters - 1]] = gaps[1:]
        times = np.cumsum(steps)
        state.clock_us = int(times[-1])
        return times.astype(np.uint64)


def _repeat_index(ends: np.ndarray) -> np.ndarray:
    """np.repeat(np.arange(len(ends)), lengths) for the lengths whose cumulative is `ends`
    (each at least 1), as the cumulative of a step at each start: a few times faster."""
    steps = np.zeros(int(ends[-1]), dtype=np.intp)
    steps[ends[:-1]] = 1
    return np.cumsum(steps)


@dataclass
class _State:
    remaining: np.ndarray  # bytes left per class
    zipf_b: int  # the offset of the permutation of zipf ranks to regions
    clock_us: int = 0  # the last cluster's time
    first: bool = True  # no cluster has come yet


class _Law:
    """A law on 0..k-1 (k <= 255) of the given weights, drawn by inversion: for a few
    values, the count of the cumulative's steps at or below u; for more, a guide table
    (Chen and Asau) gives the first index u's bin can be, and a few comparisons the index.
    In uint8 and float32: numpy's searchsorted, and sums of booleans in wider integers,
    are several times slower."""

    GUIDE = 4096
    FEW = 8

    def __init__(self, weights: np.ndarray) -> None:
        cdf = np.cumsum(weights, dtype=float)
        cdf = cdf / cdf[-1]
        cdf[-1] = 2.0  # past every u
        self.cdf = cdf.astype(np.float32)
        self.guide = np.searchsorted(self.cdf, np.arange(self.GUIDE, dtype=np.float32) / self.GUIDE,
                                     side="right").astype(np.uint8)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = rng.random(n, dtype=np.float32)
        if len(self.cdf) <= self.FEW:
            index = np.zeros(n, dtype=np.uint8)
            for step in self.cdf[:-1]:
                index += (u >= step).view(np.uint8)
            return index
        index = self.guide[(u * np.float32(self.GUIDE)).astype(np.intp)]
        while True:  # past every step at or below u
            step = u >= self.cdf[index]
            if not step.any():
                return index
            index += step.view(np.uint8)


def _zipf_ranks(u: np.ndarray, n: int, theta: float) -> np.ndarray:
    """Ranks 0..n-1 of a bounded zipf law of exponent theta (continuous approximation,
    inverted: P(rank < r) = (r^(1-theta) - 1) / ((n+1)^(1-theta) - 1)), from uniform `u`
    (float32: four times faster, and fine-grained enough for 2^24 regions, 16 TiB)."""
    if abs(theta - 1) < 1e-6:
        x = np.exp(u * np.float32(math.log(n + 1)))
    else:
        e = 1 - theta
        x = (np.float32(1) + u * np.float32((n + 1) ** e - 1)) ** np.float32(1 / e)
    return np.minimum(x.astype(np.uint64), np.uint64(n)) - np.uint64(1)


def _coprime(n: int) -> int:
    """A multiplier near n times the golden ratio's fraction, coprime with n: rank r goes
    to region (a r + b) mod n, a permutation that scatters the hot regions."""
    a = max(1, int(n * 0.6180339887)) | 1
    while math.gcd(a, n) != 1:
        a += 2 if n % 2 == 0 else 1
    return a % n or 1


def generate(spec: TraceSpec, scale: float = 1.0, seed: int = DEFAULT_SEED) -> Iterator[np.ndarray]:
    return Generator(spec, scale, seed).chunks()


@dataclass
class Tally:
    """What a stream of chunks held, counted as it passes (`counted`)."""
    records: int = 0
    reads: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    last_us: int = 0

    def counted(self, chunks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
        read, write = OP_CODE[Op.READ], OP_CODE[Op.WRITE]
        for chunk in chunks:
            reads = chunk["op"] == read
            lengths = chunk["length"].astype(np.int64)
            self.records += len(chunk)
            self.reads += int(reads.sum())
            self.read_bytes += int(lengths[reads].sum())
            self.write_bytes += int(lengths[chunk["op"] == write].sum())
            self.last_us = int(chunk["time_us"][-1]) if len(chunk) else self.last_us
            yield chunk
