"""Test shapes that reach drive states of their own: fill states, a TRIM of half
the drive, the whole drive filled. Used by the lab suite (METHODOLOGY.md section 2)
and the enterprise QD1 suite (section 3).

Every state is reached from a purged drive with large sequential writes at high
queue depth (`data_present`: 128 KiB, QD32), the fastest way to get there:

- "x% filled": purge, then x % of the drive written sequentially from LBA 0;
- "full, half trimmed": purge, fill 100 %, then TRIM the second half of the LBA
  space in `TRIM_RANGE` ranges;
- "full": purge, fill 100 %.

The drive is the test region: the whole target at scale 1, `Scale.whole_drive`
(capacity x F, at least 1 GiB) below it. At a small scale the states are
fractions of that region and the rest of the target stays purged, so a small
run exercises the procedure, not the drive's real behaviour when nearly full:
for that, use a small target (a small preset, a small --size) at scale 1.

The measured I/O of a state falls in the data present (the first x % of the
region, or its untrimmed first half), so overwrites keep the state what it says
for the whole measurement; whole-drive steps span the whole region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ssdlab.analysis import lab_scores, scores
from ssdlab.catalogue.definitions import PRECONDITION_BS, TestDef, data_present, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, Step, Test
from ssdlab.units import MiB, format_bytes

# TRIM in large ranges: one fio I/O (one discard) per 64 MiB; never scaled (a block size).
TRIM_RANGE = 64 * MiB
# The smallest test region: two TRIM ranges in the trimmed half, and a 10 % state of
# at least 25 MiB (200 blocks of 128 KiB).
MIN_REGION = 256 * MiB


@dataclass(frozen=True)
class FillState:
    """A drive state reached from a purged drive."""

    name: str
    filled: float          # share of the region written sequentially after the purge
    trim_half: bool = False

    def prepare(self, capacity: int, region: int) -> tuple[list[Step], int]:
        """The steps that reach the state, and the bytes of data present from LBA 0."""
        written = region if self.filled >= 1 else max(MiB, int(region * self.filled) // MiB * MiB)
        steps = [purge(capacity), data_present(written)]
        if not self.trim_half:
            return steps, written
        kept, trimmed = trim_split(region)
        steps.append(Step(label=f"TRIM {format_bytes(trimmed)}", phase=Phase.PRECONDITION,
                          rw=Op.TRIM, bs=TRIM_RANGE, offset=kept, size=trimmed))
        return steps, kept


FILLED_10 = FillState("10% filled", 0.10)
FILLED_50 = FillState("50% filled", 0.50)
FILLED_90 = FillState("90% filled", 0.90)
FULL = FillState("full", 1.0)
HALF_TRIMMED = FillState("full, half trimmed", 1.0, trim_half=True)


def trim_split(region: int) -> tuple[int, int]:
    """(bytes kept from LBA 0, bytes trimmed after them): the second half of the
    region, rounded down to whole TRIM ranges."""
    trimmed = region // 2 // TRIM_RANGE * TRIM_RANGE
    return region - trimmed, trimmed


def drive_region(test_id: str, scale: Scale, capacity: int) -> int:
    region = scale.whole_drive(capacity)
    if region < MIN_REGION:
        raise SsdlabError(
            f"{test_id} needs a target of at least {format_bytes(MIN_REGION)} (its drive states "
            f"are shares of the drive) but this one holds {format_bytes(capacity)}: use a larger "
            "target (--size for a file)")
    return region


@dataclass(frozen=True)
class StateTest(TestDef):
    """A test whose steps include their own purges and preconditions."""

    def span(self, scale: Scale) -> int:
        return 0  # the whole target: its states are shares of the drive

    def compile(self, scale: Scale, capacity: int) -> Test:
        steps = self.workload(scale, capacity)
        return Test(id=self.id, title=self.title, primary_score=self.primary_score,
                    steps=tuple(steps))


@dataclass(frozen=True)
class StateSweep(StateTest):
    """The same workload measured in several drive states, each reached from a purge."""

    rw: Op
    bs: int
    iodepth: int
    states: tuple[FillState, ...]
    runtime_s: float
    scorer: Callable[[str, scores.Measured], dict[str, Any]]

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = drive_region(self.id, scale, capacity)
        steps: list[Step] = []
        for state in self.states:
            prepared, span = state.prepare(capacity, region)
            steps += [*prepared, Step(
                label=state.name, rw=self.rw, bs=self.bs, iodepth=self.iodepth, size=span,
                runtime=scale.runtime(self.runtime_s), time_based=True, fill_state=state.name)]
        return steps

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return self.scorer(self.primary_score, measured)


@dataclass(frozen=True)
class TrimTest(StateTest):
    """Full drive: sequential write, TRIM of the second half in large ranges, the same
    sequential write again at once. Both writes fall in the untrimmed first half, so
    they differ only by the TRIM between them."""

    write_bs: int
    write_qd: int
    trim_range: int
    runtime_s: float

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = drive_region(self.id, scale, capacity)
        prepared, _ = FULL.prepare(capacity, region)
        kept, trimmed = trim_split(region)

        def write(label: str, state: FillState) -> Step:
            return Step(label=label, rw=Op.WRITE, bs=self.write_bs, iodepth=self.write_qd,
                        size=kept, runtime=scale.runtime(self.runtime_s), time_based=True,
                        fill_state=state.name)
        return [*prepared,
                write("write before TRIM", FULL),
                Step(label=f"TRIM {format_bytes(trimmed)}", rw=Op.TRIM, bs=self.trim_range,
                     iodepth=1, offset=kept, size=trimmed, fill_state=FULL.name),
                write("write after TRIM", HALF_TRIMMED)]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return lab_scores.trim_score(self.primary_score, measured)


@dataclass(frozen=True)
class LatencyCase:
    """One case of the maximum-write-latency test."""

    label: str
    state: FillState
    rw: Op
    bs: int
    runtime_s: float
    rwmixread: int | None = None
    rate_iops: int | None = None
    iodepth: int = 1


@dataclass(frozen=True)
class CaseList(StateTest):
    """Cases in the order given; a purge and a fill whenever the state changes."""

    cases: tuple[LatencyCase, ...]

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = drive_region(self.id, scale, capacity)
        steps: list[Step] = []
        state, span = None, 0
        for case in self.cases:
            if case.state != state:
                state = case.state
                prepared, span = state.prepare(capacity, region)
                steps += prepared
            steps.append(Step(
                label=case.label, rw=case.rw, bs=case.bs, iodepth=case.iodepth,
                rwmixread=case.rwmixread, size=span, runtime=scale.runtime(case.runtime_s),
                time_based=True, rate_iops=case.rate_iops, fill_state=state.name))
        return steps

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return lab_scores.max_latency_score(self.primary_score, measured)


@dataclass(frozen=True)
class FullDriveSteps(StateTest):
    """Purge, fill the whole drive sequentially, then each (rw, bs) over the whole drive
    at the queue depth, limited by time or bytes, whichever comes first."""

    patterns: tuple[Op, ...]
    block_sizes: tuple[int, ...]
    iodepth: int
    runtime_s: float
    io_size_bytes: int
    scorer: Callable[[str, scores.Measured], dict[str, Any]]

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = drive_region(self.id, scale, capacity)
        prepared, span = FULL.prepare(capacity, region)
        several = len(self.patterns) * len(self.block_sizes) > 1
        return [*prepared, *(
            Step(label=f"{rw} {format_bytes(bs)}" if several else f"{rw} QD{self.iodepth}",
                 rw=rw, bs=bs, iodepth=self.iodepth, size=span // bs * bs,
                 runtime=scale.runtime(self.runtime_s), io_size=scale.io_size(self.io_size_bytes, bs),
                 fill_state=FULL.name)
            for rw in self.patterns for bs in self.block_sizes)]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        return self.scorer(self.primary_score, measured)


__all__ = ["FILLED_10", "FILLED_50", "FILLED_90", "FULL", "HALF_TRIMMED", "MIN_REGION",
           "PRECONDITION_BS", "TRIM_RANGE", "CaseList", "FillState", "FullDriveSteps",
           "LatencyCase", "StateSweep", "TrimTest", "drive_region", "trim_split"]
