"""The SNIA PTS suites (METHODOLOGY.md section 7): `pts` (client) and `pts-enterprise`.

Each steady-state test runs one or more loops. A loop: purge, workload-independent
preconditioning (WIPC: twice the user capacity in 128 KiB sequential writes over the active
range, without a pause before the rounds), then rounds of its cells, one minute each, until
every tracked cell is steady by ssdlab's own check (analysis/steady_state.py: a 5-round
window, range within 20 % of its mean, fitted change within 10 %) or 25 rounds have run. A
test is compiled with all 25 rounds, so a dry run states its worst case; it stops after the
round that reaches steady state, and says when none did. The drive's health log is read after
every round, its temperature throughout.

- IOPS: random I/O, for each read share 100, 95, 65, 50, 35, 5, 0 % the block sizes 1024,
  128, 64, 32, 16, 8, 4 and 0.5 KiB, in that nesting and order (PTS-E 1.1, 3.2.1); tracked:
  4 KiB at 0 % reads.
- Throughput: sequential 100 % reads then 100 % writes, a loop per block size (1024 KiB; the
  enterprise variant also 128 KiB, each loop from its own purge and WIPC in its block size);
  tracked: both cells.
- Latency: random I/O at one thread and QD1, for the read shares 100, 65, 0 % the block sizes
  8, 4 and 0.5 KiB; the mean and maximum latency of each; tracked: the mean of 4 KiB at 0 %.
- Write saturation: from a purged drive, 4 KiB random writes over the active range until four
  times the user capacity is written or 24 hours have passed, IOPS per minute against time and
  data written (one job at the variant's total depth: the curve is the drive's).

The variants. Client: the volatile write cache on, an active range of the first 75 % of the
LBAs. Enterprise: the cache off, the whole LBA range. The PTS leaves threads and queue depth
per thread to the operator; ssdlab uses the values the PTS recommends (client 2 threads of
QD16, enterprise 4 of QD32) for random I/O, each thread a fio job of its own, and one job at
their total depth for sequential I/O and the WIPC, where several sequential threads over one
range would interleave into a pattern that is neither.

On a real drive a test interrupted mid-loop goes on from the last round it completed (a loop
not past its first round starts again from its purge: the PTS allows no pause between WIPC and
the rounds). A simulated drive's state lives in its process: the stored steps are run again on
a fresh drive, which the same seed brings to the same state (checked step by step), and the
test goes on from there. `--scale` shortens every minute, the WIPC and the write saturation;
such a run is not PTS-conformant and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from ssdlab.analysis import scores
from ssdlab.analysis.steady_state import WINDOW_ROUNDS, find_steady_state
from ssdlab.catalogue.definitions import PRECONDITION_BS, PRECONDITION_QD, TestDef, WholeDriveProcedure, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Op, Phase, Step, StepResult, Test
from ssdlab.units import KiB, MiB, format_bytes

CELL_S = 60.0
MAX_ROUNDS = 25
WIPC_CAPACITIES = 2
WSAT_CAPACITIES = 4
WSAT_S = 24 * 3600.0
IOPS_READ_SHARES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)
LATENCY_READ_SHARES = (100, 65, 0)
LATENCY_BLOCK_SIZES = (8 * KiB, 4 * KiB, 512)
WSAT_TAIL = 0.1  # the write saturation's score: its mean IOPS over the last tenth of its windows
WSAT_WINDOW_S = 60.0  # its curve: IOPS per minute, as the PTS records it (per second in a run under 10 minutes)


@dataclass(frozen=True)
class Variant:
    name: str
    active_range: float  # share of the LBAs, from the first
    threads: int
    queue_depth: int  # per thread
    write_cache: bool  # the volatile write cache (NVMe feature 06h) the variant asks for
    throughput_block_sizes: tuple[int, ...]

    def settings(self, scale: Scale) -> dict[str, Any]:
        return {"variant": self.name, "active_range_pct": round(self.active_range * 100),
                "threads": self.threads, "queue_depth": self.queue_depth,
                "write_cache": "on" if self.write_cache else "off", "scale": scale.factor,
                "conformant": scale.factor == 1}


CLIENT = Variant("client", 0.75, 2, 16, True, (1024 * KiB,))
ENTERPRISE = Variant("enterprise", 1.0, 4, 32, False, (1024 * KiB, 128 * KiB))


class Figure(StrEnum):
    IOPS = "IOPS"
    MBPS = "MB/s"
    MEAN_US = "mean µs"


@dataclass(frozen=True)
class Cell:
    """One stimulus of a round: a read share and a block size, random or sequential."""

    read_pct: int
    bs: int
    sequential: bool = False

    @property
    def name(self) -> str:
        pattern = "SEQ" if self.sequential else "RND"
        return f"{pattern} {format_bytes(self.bs)} {self.read_pct}/{100 - self.read_pct}"

    @property
    def op(self) -> Op:
        if self.read_pct == 100:
            return Op.READ if self.sequential else Op.RANDREAD
        if self.read_pct == 0:
            return Op.WRITE if self.sequential else Op.RANDWRITE
        return Op.RW if self.sequential else Op.RANDRW

    def matches(self, step: Step) -> bool:
        mixed = 0 < self.read_pct < 100
        return (step.rw is self.op and step.bs == self.bs
                and step.rwmixread == (self.read_pct if mixed else None))


@dataclass(frozen=True)
class Loop:
    """Rounds of `cells` until every `tracked` cell is steady, after a purge and a WIPC."""

    name: str
    cells: tuple[Cell, ...]
    tracked: tuple[Cell, ...]
    figure: Figure
    wipc_bs: int = PRECONDITION_BS


class PtsRun(Protocol):
    """A PTS test being executed, as its `run` sees it (execution implements it)."""

    done: list[tuple[Step, StepResult]]  # the test's stored steps: on a resume, those it kept

    def run_step(self, step: Step, read_health: bool = False) -> None:
        """A step, stored with the health log read after it when asked (each round's last)."""

    def replay(self, step: Step, stored: StepResult) -> None:
        """A kept step run again on a simulated drive (to rebuild its state), not stored; nothing
        on a real one, which kept its state."""


def figure_of(figure: Figure, result: StepResult) -> float:
    if figure is Figure.IOPS:
        return result.iops
    if figure is Figure.MBPS:
        return result.mbps
    directions = [d for d in (result.read, result.write) if d is not None and d.ios]
    ios = sum(d.ios for d in directions)
    return sum(d.latency.mean_ns * d.ios for d in directions) / ios / 1e3 if ios else 0.0


@dataclass(frozen=True)
class PtsTest(WholeDriveProcedure):
    __test__ = False  # not a pytest test class
    id: str
    title: str
    primary_score: str
    variant: Variant
    loops: tuple[Loop, ...]
    threads: int  # of random cells; sequential ones and the WIPC run one job at the total depth
    queue_depth: int  # per thread

    def compile(self, scale: Scale, capacity: int) -> Test:
        region = _active_range(self.variant, scale, capacity)
        steps: list[Step] = []
        for loop in self.loops:
            steps += [purge(capacity), self._wipc(loop, scale, region)]
            for r in range(1, MAX_ROUNDS + 1):
                steps += [self._cell(loop, cell, r, scale, region) for cell in loop.cells]
        return Test(id=self.id, title=self.title, primary_score=self.primary_score, steps=tuple(steps),
                    settings=self.variant.settings(scale) | {"threads": self.threads, "queue_depth": self.queue_depth})

    def _wipc(self, loop: Loop, scale: Scale, region: int) -> Step:
        total = WIPC_CAPACITIES * region
        return Step(label=f"{loop.name}: WIPC, {format_bytes(total)} of {format_bytes(loop.wipc_bs)} sequential "
                          "writes", phase=Phase.PRECONDITION, rw=Op.WRITE, bs=loop.wipc_bs,
                    iodepth=max(PRECONDITION_QD, self.threads * self.queue_depth), size=region, io_size=total)

    def _cell(self, loop: Loop, cell: Cell, r: int, scale: Scale, region: int) -> Step:
        shape = {"rw": cell.op, "bs": cell.bs, "size": region, "runtime": scale.runtime(CELL_S), "time_based": True,
                 **({"rwmixread": cell.read_pct} if 0 < cell.read_pct < 100 else {})}
        label = f"{loop.name} round {r}/{MAX_ROUNDS}: {cell.name}"
        if cell.sequential or self.threads == 1:
            return Step(label=label, iodepth=self.threads * self.queue_depth, **shape)
        others = tuple(Step(label=f"{label} thread {t}", iodepth=self.queue_depth, **shape)
                       for t in range(2, self.threads + 1))
        return Step(label=label, iodepth=self.queue_depth, concurrent=others, **shape)

    # -- running ------------------------------------------------------------------------

    def run(self, run: PtsRun, steps: Sequence[Step]) -> dict[str, Any]:
        """Each loop's purge, WIPC and rounds until its tracked cells are steady; the steps
        `run.done` kept are replayed (a simulated drive) rather than stored again."""
        kept = list(run.done)
        at = 0  # where the loop's steps begin in `steps`
        stopped: list[int | None] = []
        for loop in self.loops:
            n = len(loop.cells)
            results: list[StepResult] = []
            steady_at = None
            for i, step in enumerate(steps[at:at + _steps_of(loop)]):
                round_ends = i >= 2 and (i - 1) % n == 0
                result = self._step(run, step, kept, read_health=round_ends)
                if i >= 2:  # after the purge and the WIPC
                    results.append(result)
                if round_ends and (steady_at := _steady_round(loop, results)):
                    break
            stopped.append(steady_at)
            at += _steps_of(loop)
        return {"steady_rounds": stopped}

    @staticmethod
    def _step(run: PtsRun, step: Step, kept: list[tuple[Step, StepResult]], read_health: bool) -> StepResult:
        if not kept:
            run.run_step(step, read_health=read_health)
            return run.done[-1][1]
        stored_step, stored = kept.pop(0)
        if stored_step != step:
            raise SsdlabError(f"the stored step {stored_step.label!r} is not the test's {step.label!r} there: "
                              "start the run again")
        run.replay(step, stored)
        return stored

    def resumable(self, kept: Sequence[tuple[Step, StepResult]]) -> int:
        """How many of the `kept` stored steps a resumed test keeps: those of the loops it ended
        and of the rounds the current loop completed; a loop not past its first round starts
        again from its purge (the PTS allows no pause between the WIPC and the rounds)."""
        at = 0
        for loop in self.loops:
            n = len(loop.cells)
            results = [result for _, result in kept[at + 2:at + _steps_of(loop)]]
            rounds = len(results) // n
            steady = _steady_round(loop, results[:rounds * n])
            if steady is None and rounds < MAX_ROUNDS:
                return at + 2 + rounds * n if rounds else at
            at += 2 + (steady or MAX_ROUNDS) * n
        return at

    # -- the result ---------------------------------------------------------------------

    def result(self, found: dict[str, Any], done: Sequence[tuple[Step, StepResult]]) -> dict[str, Any]:
        loops: list[dict[str, Any]] = []
        measured = [(s, r) for s, r in done if s.phase is Phase.MEASURE]
        for loop, steady_round in zip(self.loops, found["steady_rounds"], strict=True):
            count = steady_round or MAX_ROUNDS
            mine, measured = measured[:count * len(loop.cells)], measured[count * len(loop.cells):]
            loops.append(_loop_result(loop, mine, steady_round))
        first = loops[0]
        tracked = self.loops[0].tracked[-1].name
        value = first["window_means"].get(tracked)
        return {"name": self.primary_score, "value": value, "unit": self.loops[0].figure.value,
                "steady": all(lp["steady"]["reached"] for lp in loops), "loops": loops}


def _active_range(variant: Variant, scale: Scale, capacity: int) -> int:
    region = scale.whole_drive(capacity)
    span = int(region * variant.active_range) // MiB * MiB
    if span < max(IOPS_BLOCK_SIZES):
        raise SsdlabError(f"the PTS needs an active range of at least {format_bytes(max(IOPS_BLOCK_SIZES))}; "
                          f"this target gives {format_bytes(span)}: use a larger target (--size for a file)")
    return span


def _steps_of(loop: Loop) -> int:
    """A loop's steps as compiled: its purge, its WIPC, every round."""
    return 2 + MAX_ROUNDS * len(loop.cells)


def _all_steady(series: dict[Cell, list[float]]) -> bool:
    """Is the window of the last rounds steady for every tracked cell?"""
    return all(len(s) >= WINDOW_ROUNDS and find_steady_state(s[-WINDOW_ROUNDS:]).reached for s in series.values())


def _steady_round(loop: Loop, results: Sequence[StepResult]) -> int | None:
    """The first round at whose end every tracked cell was steady, over the results of the
    loop's rounds in order; None when none was."""
    n = len(loop.cells)
    series: dict[Cell, list[float]] = {cell: [] for cell in loop.tracked}
    for k in range(len(results) // n):
        for j, cell in enumerate(loop.cells):
            if cell in series:
                series[cell].append(figure_of(loop.figure, results[k * n + j]))
        if _all_steady(series):
            return k + 1
    return None


def _loop_result(loop: Loop, measured: Sequence[tuple[Step, StepResult]], steady_round: int | None
                 ) -> dict[str, Any]:
    """Every round's figure of each cell; the tracked cells' steady state; the measurement
    window's means (the last five rounds run, steady or not)."""
    rounds: list[dict[str, float]] = []
    for k in range(0, len(measured), len(loop.cells)):
        row = {}
        for cell, (step, result) in zip(loop.cells, measured[k:k + len(loop.cells)], strict=True):
            if not cell.matches(step):
                raise SsdlabError(f"{step.label!r} is not the cell {cell.name} the PTS loop expects there")
            row[cell.name] = round(figure_of(loop.figure, result), 3)
            if loop.figure is Figure.MEAN_US:
                row[f"{cell.name} max"] = round(max((d.latency.max_ns for d in (result.read, result.write)
                                                     if d is not None and d.ios), default=0) / 1e3, 3)
        rounds.append(row)
    window = rounds[-WINDOW_ROUNDS:]
    means = {name: round(sum(r[name] for r in window) / len(window), 3) for name in window[0]} if window else {}
    tracked = {}
    for cell in loop.tracked:
        series = [r[cell.name] for r in rounds]
        found = find_steady_state(series[-WINDOW_ROUNDS:]) if len(series) >= WINDOW_ROUNDS else None
        w = found.window if found else None
        tracked[cell.name] = {"series": series, "window": None if w is None else {
            "first_round": len(series) - WINDOW_ROUNDS + 1, "last_round": len(series), "mean": w.mean,
            "data_excursion": w.data_excursion, "slope": w.slope, "slope_excursion": w.slope_excursion}}
    return {"name": loop.name, "figure": loop.figure.value, "cells": [c.name for c in loop.cells],
            "rounds": rounds, "window_means": means, "tracked": tracked,
            "steady": {"reached": steady_round is not None, "round": steady_round, "rounds_run": len(rounds),
                       "max_rounds": MAX_ROUNDS}}


@dataclass(frozen=True)
class WriteSaturation(TestDef):
    """From a purged drive, 4 KiB random writes over the active range until four times the
    user capacity is written or 24 hours have passed: IOPS against time and data written."""

    __test__ = False  # not a pytest test class
    variant: Variant = CLIENT

    def span(self, scale: Scale) -> int:
        return 0  # from a purged drive: no data before

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = _active_range(self.variant, scale, capacity)
        total = WSAT_CAPACITIES * scale.whole_drive(capacity)
        return [Step(label=f"RND 4 KiB writes: {format_bytes(total)} or {scale.runtime(WSAT_S) / 3600:g} h",
                     rw=Op.RANDWRITE, bs=4 * KiB, iodepth=self.variant.threads * self.variant.queue_depth,
                     size=region, io_size=total, runtime=scale.runtime(WSAT_S))]

    def compile(self, scale: Scale, capacity: int) -> Test:
        test = super().compile(scale, capacity)
        return test.model_copy(update={"settings": self.variant.settings(scale)})

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        (step, result), = measured
        seconds = result.per_second
        window = WSAT_WINDOW_S if result.busy_s >= 10 * WSAT_WINDOW_S else 1.0
        points, written, start, ios, t_end = [], 0.0, 0.0, 0.0, 0.0
        for point in seconds:  # each point the interval that ends at t_s
            span = point.t_s - t_end
            ios, t_end = ios + point.iops * span, point.t_s
            if t_end - start >= window - 1e-9 or point is seconds[-1]:
                written += ios * step.bs
                points.append({"t_s": round(t_end, 3), "iops": round(ios / (t_end - start), 1),
                               "written_gb": round(written / 1e9, 3)})
                start, ios = t_end, 0.0
        tail = points[-max(1, round(len(points) * WSAT_TAIL)):]
        value = sum(p["iops"] for p in tail) / len(tail) if tail else None
        return {"name": self.primary_score, "value": None if value is None else round(value, 1), "unit": "IOPS",
                "fob_iops": points[0]["iops"] if points else None, "window_s": window, "points": points,
                "written_gb": round(written / 1e9, 3)}


def _iops_loop() -> Loop:
    cells = tuple(Cell(share, bs) for share in IOPS_READ_SHARES for bs in IOPS_BLOCK_SIZES)
    return Loop("IOPS", cells, (Cell(0, 4 * KiB),), Figure.IOPS)


def _throughput_loop(bs: int) -> Loop:
    cells = (Cell(100, bs, sequential=True), Cell(0, bs, sequential=True))
    return Loop(f"throughput {format_bytes(bs)}", cells, cells, Figure.MBPS, wipc_bs=bs)


def _latency_loop() -> Loop:
    cells = tuple(Cell(share, bs) for share in LATENCY_READ_SHARES for bs in LATENCY_BLOCK_SIZES)
    return Loop("latency", cells, (Cell(0, 4 * KiB),), Figure.MEAN_US)


def _tests(variant: Variant, prefix: str) -> tuple[PtsTest | WriteSaturation, ...]:
    name = f"SNIA PTS ({variant.name})"
    return (
        PtsTest(id=f"{prefix}-iops", title=f"{name} IOPS: random I/O, 7 read shares x 8 block sizes, to steady state",
                primary_score="4 KiB random write IOPS in the measurement window", variant=variant,
                loops=(_iops_loop(),), threads=variant.threads, queue_depth=variant.queue_depth),
        PtsTest(id=f"{prefix}-throughput", title=f"{name} throughput: sequential reads and writes, to steady state",
                primary_score="1 MiB sequential write MB/s in the measurement window", variant=variant,
                loops=tuple(map(_throughput_loop, variant.throughput_block_sizes)), threads=variant.threads,
                queue_depth=variant.queue_depth),
        PtsTest(id=f"{prefix}-latency", title=f"{name} latency: random I/O at QD1, mean and maximum, to steady state",
                primary_score="4 KiB random write mean latency in the measurement window", variant=variant,
                loops=(_latency_loop(),), threads=1, queue_depth=1),
        WriteSaturation(id=f"{prefix}-wsat", title=f"{name} write saturation: 4 KiB random writes from a purged drive, "
                                                   "4x the capacity or 24 hours",
                        primary_score="4 KiB random write IOPS in the last tenth of the test", variant=variant),
    )


PTS_TESTS = (*_tests(CLIENT, "pts"), *_tests(ENTERPRISE, "pts-e"))
