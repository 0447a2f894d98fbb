"""The shapes of catalogue tests. Each compiles, for a scale and a target
capacity, to its steps: purge, the data the test needs, then the workload."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from ssdlab.analysis import scores
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, Step, Test
from ssdlab.telemetry.needs import Need
from ssdlab.units import KiB, format_bytes

# How the data a test needs is written before it: large sequential writes at
# high queue depth, the fastest way to reach a fill state.
PRECONDITION_BS = 128 * KiB
PRECONDITION_QD = 32

QUEUE_DEPTHS = (1, 2, 4, 8, 16, 32)
READ_SHARES = tuple(range(100, -1, -10))  # the 11 mixes, 100 % reads down to 0 %


def purge(capacity: int) -> Step:
    return Step(label="purge", phase=Phase.PURGE, rw=Op.TRIM, bs=PRECONDITION_BS,
                size=capacity // PRECONDITION_BS * PRECONDITION_BS)


def data_present(nbytes: int) -> Step:
    return Step(label=f"write {format_bytes(nbytes)}", phase=Phase.PRECONDITION, rw=Op.WRITE,
                bs=PRECONDITION_BS, iodepth=PRECONDITION_QD, size=nbytes)


def _fits(test_id: str, span: int, capacity: int) -> None:
    if span > capacity:
        raise SsdlabError(
            f"{test_id} needs a {format_bytes(span)} span but the target holds only "
            f"{format_bytes(capacity)}: use a smaller --scale or a larger target (--size for a file)")


class WholeDriveProcedure:
    """A test that runs its own procedure over the whole drive (retention, endurance): no span
    to size a file by, and nothing it needs beyond I/O."""

    def span(self, scale: Scale) -> int:
        return 0  # the whole drive, scaled

    def needs(self) -> tuple[Need, ...]:
        return ()


@dataclass(frozen=True)
class TestDef(ABC):
    id: str
    title: str
    primary_score: str

    @abstractmethod
    def span(self, scale: Scale) -> int:
        """Bytes of the target the test touches (to size file targets); 0 = all of it."""

    @abstractmethod
    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        """The measured steps, after the purge and the data the test needs."""

    @abstractmethod
    def score(self, measured: scores.Measured) -> dict[str, Any]:
        """The primary score from the measured steps and their results."""

    def needs(self) -> tuple[Need, ...]:
        """What the target must have beyond I/O; a target without it skips the test, with the reason."""
        return ()

    def compile(self, scale: Scale, capacity: int) -> Test:
        span = self.span(scale)
        _fits(self.id, span, capacity)
        steps = [purge(capacity), *([data_present(span)] if span else []),
                 *self.workload(scale, capacity)]
        return Test(id=self.id, title=self.title, primary_score=self.primary_score,
                    steps=tuple(steps))


@dataclass(frozen=True)
class BurstTest(TestDef):
    """QD1 bursts separated by idle time so the drive is busy `duty_cycle` of the time."""

    rw: Op
    bs: int
    span_bytes: int
    burst_bytes: int
    total_bytes: int
    duty_cycle: float = 0.2

    def span(self, scale: Scale) -> int:
        return scale.span(self.span_bytes)

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        burst = scale.burst(self.burst_bytes, self.bs)
        count = self.total_bytes // self.burst_bytes  # the number of bursts never scales
        return [Step(label=f"{count} bursts of {format_bytes(burst)}", rw=self.rw, bs=self.bs,
                     iodepth=1, size=self.span(scale), io_size=burst * count, burst_bytes=burst,
                     duty_cycle=self.duty_cycle)]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return scores.throughput_score(self.primary_score, measured)


@dataclass(frozen=True)
class QueueDepthSweep(TestDef):
    """One step per queue depth, each limited by time or bytes, whichever comes first,
    followed by idle time."""

    rw: Op
    bs: int
    span_bytes: int
    runtime_s: float
    io_size_bytes: int
    idle_s: float
    queue_depths: tuple[int, ...] = QUEUE_DEPTHS

    def span(self, scale: Scale) -> int:
        return scale.span(self.span_bytes)

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        return [Step(label=f"QD{qd}", rw=self.rw, bs=self.bs, iodepth=qd, size=self.span(scale),
                     runtime=scale.runtime(self.runtime_s),
                     io_size=scale.io_size(self.io_size_bytes, self.bs),
                     idle_after=scale.idle(self.idle_s))
                for qd in self.queue_depths]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return scores.queue_depth_score(self.primary_score, measured)


@dataclass(frozen=True)
class MixSweep(TestDef):
    """The 11 read/write mixes from 100 % reads to 0 %, idling after each one so that
    the whole test is busy `duty_cycle` of the time."""

    rw: Op
    bs: int
    iodepth: int
    span_bytes: int
    runtime_s: float
    io_size_bytes: int
    duty_cycle: float = 0.5
    read_shares: tuple[int, ...] = READ_SHARES

    def span(self, scale: Scale) -> int:
        return scale.span(self.span_bytes)

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        return [Step(label=f"{share}% read", rw=self.rw, bs=self.bs, iodepth=self.iodepth,
                     rwmixread=share, size=self.span(scale), runtime=scale.runtime(self.runtime_s),
                     io_size=scale.io_size(self.io_size_bytes, self.bs), duty_cycle=self.duty_cycle)
                for share in self.read_shares]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return scores.mix_score(self.primary_score, measured)


@dataclass(frozen=True)
class WholeDriveFill(TestDef):
    """Sequential writes over the whole LBA range of a purged drive, without a pause,
    with the throughput of every GiB written."""

    bs: int
    iodepth: int

    def span(self, scale: Scale) -> int:
        return 0  # no data before: the fill starts from a purged drive

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        span = scale.whole_drive(capacity)
        return [Step(label=f"fill {format_bytes(span)}", rw=Op.WRITE, bs=self.bs,
                     iodepth=self.iodepth, size=span, per_gib_series=True)]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return scores.fill_score(self.primary_score, measured)
