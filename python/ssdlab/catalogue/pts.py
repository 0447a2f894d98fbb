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
- Host idle recovery: 4 KiB random writes (1-minute rounds) to steady state, then for each idle
  length 5, 10, 15, 25 and 50 s, 360 bursts of 5 s of those writes each followed by that idle,
  and 30 minutes of writes without idle (the return to the baseline); IOPS of every burst.
- Demand intensity / response time histogram: 4 KiB random I/O, 65 % reads, at thread counts
  32, 16, 8, 6, 4, 2, 1, each at queue depths 32, 16, 8, 6, 4, 2, 1 per thread (1-minute cells)
  to steady state of the heaviest load's IOPS; then the load with the most IOPS whose mean
  response time stays under 5 ms in the measurement window runs 10 minutes for its
  response-time histogram (compiled at the heaviest load, set when the rounds are done).
- Cross stimulus recovery: from a purged drive, 128 KiB sequential writes for 8 hours, 4 KiB
  random writes for 6, sequential writes for 8, without a pause; MB/s and IOPS per minute, and
  how long the last sequential writes take to come back within 90 % of the first's speed.
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
from ssdlab.analysis.steady_state import WINDOW_ROUNDS, measurement_window
from ssdlab.catalogue.definitions import PRECONDITION_BS, PRECONDITION_QD, TestDef, WholeDriveProcedure, purge
from ssdlab.catalogue.scaling import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Latency, Op, Phase, Step, StepResult, Test
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
CURVE_TAIL = 0.1  # a long step's figure: its mean over the last tenth of its windows
CURVE_WINDOW_S = 60.0  # its curve: per minute, as the PTS records it (per second in a step under 10 minutes)
DI_THREADS = (32, 16, 8, 6, 4, 2, 1)
DI_DEPTHS = (32, 16, 8, 6, 4, 2, 1)
RTH_S = 600.0  # the response-time histogram's run
RTH_MAX_MEAN_US = 5000.0
HIR_IDLES_S = (5.0, 10.0, 15.0, 25.0, 50.0)
HIR_BURSTS = 360
HIR_BURSTS_FLOOR = 10  # bursts per idle length in a scaled run
HIR_BURST_S = 5.0
XSR_ACCESSES = ((Op.WRITE, 128 * KiB, 8), (Op.RANDWRITE, 4 * KiB, 6), (Op.WRITE, 128 * KiB, 8))  # (rw, bs, hours)


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
    threads: int | None = None  # and queue depth per thread: the test's unless set (demand intensity)
    depth: int | None = None

    @property
    def name(self) -> str:
        pattern = "SEQ" if self.sequential else "RND"
        load = f" TC{self.threads} QD{self.depth}" if self.threads is not None else ""
        return f"{pattern} {format_bytes(self.bs)} {self.read_pct}/{100 - self.read_pct}{load}"

    @property
    def rwmixread(self) -> int | None:
        """fio's read share: a mix's; None for reads or writes only."""
        return self.read_pct if 0 < self.read_pct < 100 else None

    @property
    def op(self) -> Op:
        if self.read_pct == 100:
            return Op.READ if self.sequential else Op.RANDREAD
        if self.read_pct == 0:
            return Op.WRITE if self.sequential else Op.RANDWRITE
        return Op.RW if self.sequential else Op.RANDRW

    def matches(self, step: Step) -> bool:
        return (step.rw is self.op and step.bs == self.bs and step.rwmixread == self.rwmixread
                and (self.threads is None or (len(step.jobs), step.iodepth) == (self.threads, self.depth)))


@dataclass(frozen=True)
class Loop:
    """Rounds of `cells` until every `tracked` cell is steady, after a purge and a WIPC."""

    name: str
    cells: tuple[Cell, ...]
    tracked: tuple[Cell, ...]
    figure: Figure
    wipc_bs: int = PRECONDITION_BS
    with_latency: bool = False  # each cell's mean response time recorded beside its figure


def threaded(label: str, cell: Cell, threads: int, depth: int, runtime: float, region: int) -> Step:
    """`cell` for `runtime` seconds over `region`: random I/O in `threads` fio jobs of `depth`
    each; sequential I/O in one job at their total depth."""
    shape: dict[str, Any] = {"rw": cell.op, "bs": cell.bs, "rwmixread": cell.rwmixread, "size": region,
                             "runtime": runtime, "time_based": True}
    if cell.sequential or threads == 1:
        return Step(label=label, iodepth=threads * depth, **shape)
    others = tuple(Step(label=f"{label} thread {t}", iodepth=depth, **shape) for t in range(2, threads + 1))
    return Step(label=label, iodepth=depth, concurrent=others, **shape)


@dataclass(frozen=True)
class ResponseHistogram:
    """What demand intensity does once the drive is steady: the load with the most IOPS whose
    mean response time stays under 5 ms in the measurement window, run for 10 minutes for its
    response-time histogram. Compiled at the most demanding load; set when the loop is done."""

    cell: Cell

    def steps(self, scale: Scale, region: int, depth: int) -> list[Step]:
        return [self._step(scale.runtime(RTH_S), region, max(DI_THREADS), max(DI_DEPTHS))]

    def _step(self, runtime: float, region: int, threads: int, depth: int) -> Step:
        return threaded(f"response-time histogram: {self.cell.name} TC{threads} QD{depth}",
                        Cell(self.cell.read_pct, self.cell.bs), threads, depth, runtime, region)

    def actual(self, step: Step, loop: Loop, window: Sequence[StepResult]) -> Step:
        """The compiled `step` at the load the loop's measurement window chose."""
        threads, depth, _, _ = self.chosen(loop, window)
        return self._step(step.runtime or RTH_S, step.size, threads, depth)

    @staticmethod
    def chosen(loop: Loop, window: Sequence[StepResult]) -> tuple[int, int, float, float]:
        """(threads, depth, IOPS, mean µs) of the load with the most IOPS among those whose mean
        response time is under 5 ms, over the window's rounds; the lightest load when none is."""
        n = len(loop.cells)
        loads = []
        for j, cell in enumerate(loop.cells):
            results = window[j::n]
            iops = sum(figure_of(Figure.IOPS, r) for r in results) / len(results)
            mean_us = sum(figure_of(Figure.MEAN_US, r) for r in results) / len(results)
            loads.append((cell.threads or 1, cell.depth or 1, iops, mean_us))
        under = [load for load in loads if load[3] < RTH_MAX_MEAN_US]
        return max(under, key=lambda load: load[2]) if under else min(loads, key=lambda load: load[0] * load[1])

    def result(self, measured: Sequence[tuple[Step, StepResult]]) -> dict[str, Any]:
        step, result = measured[-1]
        directions = {name: d.latency.model_dump(mode="json") for name, d in result.directions.items()}
        return {"value": round(result.iops, 1), "unit": "IOPS",
                "histogram_step": {"threads": len(step.jobs), "depth": step.iodepth, "iops": round(result.iops, 1),
                                   "mean_us": round(figure_of(Figure.MEAN_US, result), 1), "latency": directions}}


@dataclass(frozen=True)
class IdleRecovery:
    """What host idle recovery does once the drive is steady: for each idle length, bursts of
    5 s of 4 KiB random writes each followed by that much idle, then as long again of writes
    without idle (the return to the baseline)."""

    def steps(self, scale: Scale, region: int, depth: int) -> list[Step]:
        count = scale.repetitions(HIR_BURSTS, HIR_BURSTS_FLOOR)
        shape: dict[str, Any] = {"rw": Op.RANDWRITE, "bs": 4 * KiB, "iodepth": depth, "size": region,
                                 "time_based": True}
        steps: list[Step] = []
        for idle in HIR_IDLES_S:
            steps += [Step(label=f"idle {idle:g} s: burst {k}/{count}", runtime=scale.runtime(HIR_BURST_S),
                           idle_after=scale.idle(idle), **shape) for k in range(1, count + 1)]
            steps.append(Step(label=f"after idle {idle:g} s: back to the baseline",
                              runtime=scale.runtime(count * HIR_BURST_S), **shape))
        return steps

    @staticmethod
    def actual(step: Step, loop: Loop, window: Sequence[StepResult]) -> Step:
        return step  # as compiled

    @staticmethod
    def result(measured: Sequence[tuple[Step, StepResult]]) -> dict[str, Any]:
        """Per idle length: each burst's IOPS, their mean, and the IOPS of the return to the
        baseline (the step without idle that ends each)."""
        states: list[dict[str, Any]] = []
        bursts: list[float] = []
        for step, result in measured:
            if step.idle_after > 0:
                bursts.append(round(result.iops, 1))
                continue
            states.append({"idle_s": HIR_IDLES_S[len(states)], "burst_iops": bursts,
                           "mean_iops": round(sum(bursts) / len(bursts), 1) if bursts else None,
                           "baseline_iops": round(result.iops, 1)})
            bursts = []
        return {"value": states[-1]["mean_iops"] if len(states) == len(HIR_IDLES_S) else None, "unit": "IOPS",
                "wait_states": states}


class PtsRun(Protocol):
    """A PTS test being executed, as its `run` sees it (execution implements it)."""

    done: list[tuple[Step, StepResult]]  # the test's stored steps: on a resume, those it kept

    def run_step(self, step: Step, read_health: bool = False) -> None:
        """A step, stored with the health log read after it when asked (each round's last)."""

    def replay(self, step: Step, stored: StepResult) -> None:
        """A kept step run again on a simulated drive (to rebuild its state), not stored; nothing
        on a real one, which kept its state."""


def latency_of(result: StepResult) -> Latency:
    """The latency of a step's reads and writes together."""
    return Latency.merge(d.latency for d in (result.read, result.write) if d is not None)


def figure_of(figure: Figure, result: StepResult) -> float:
    if figure is Figure.IOPS:
        return result.iops
    if figure is Figure.MBPS:
        return result.mbps
    return latency_of(result).mean_ns / 1e3


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
    after: IdleRecovery | ResponseHistogram | None = None  # what runs once the loops are done

    def compile(self, scale: Scale, capacity: int) -> Test:
        region = _active_range(self.variant, scale, capacity)
        steps: list[Step] = []
        for loop in self.loops:
            steps += [purge(capacity), self._wipc(loop, scale, region)]
            for r in range(1, MAX_ROUNDS + 1):
                steps += [self._cell(loop, cell, r, scale, region) for cell in loop.cells]
        if self.after is not None:
            steps += self.after.steps(scale, region, self.threads * self.queue_depth)
        return Test(id=self.id, title=self.title, primary_score=self.primary_score, steps=tuple(steps),
                    settings=self.variant.settings(scale) | {"threads": self.threads, "queue_depth": self.queue_depth})

    def _wipc(self, loop: Loop, scale: Scale, region: int) -> Step:
        total = WIPC_CAPACITIES * region
        return Step(label=f"{loop.name}: WIPC, {format_bytes(total)} of {format_bytes(loop.wipc_bs)} sequential "
                          "writes", phase=Phase.PRECONDITION, rw=Op.WRITE, bs=loop.wipc_bs,
                    iodepth=max(PRECONDITION_QD, self.threads * self.queue_depth), size=region, io_size=total)

    def _cell(self, loop: Loop, cell: Cell, r: int, scale: Scale, region: int) -> Step:
        label = f"{loop.name} round {r}/{MAX_ROUNDS}: {cell.name}"
        threads, depth = (self.threads, self.queue_depth) if cell.threads is None else (cell.threads, cell.depth)
        return threaded(label, cell, threads, depth or 1, scale.runtime(CELL_S), region)

    # -- running ------------------------------------------------------------------------

    def run(self, run: PtsRun, steps: Sequence[Step]) -> dict[str, Any]:
        """Each loop's purge, WIPC and rounds until its tracked cells are steady; the steps
        `run.done` kept are replayed (a simulated drive) rather than stored again."""
        kept = list(run.done)
        at = 0  # where the loop's steps begin in `steps`
        stopped: list[int | None] = []
        results: list[StepResult] = []
        for loop in self.loops:
            n = len(loop.cells)
            results = []
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
        for step in steps[at:]:
            assert self.after is not None
            window = results[-WINDOW_ROUNDS * len(self.loops[-1].cells):]
            self._step(run, self.after.actual(step, self.loops[-1], window), kept, read_health=False)
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
        and of the rounds the current loop completed (a loop not past its first round starts
        again from its purge: the PTS allows no pause between the WIPC and the rounds), and
        every step after the loops it stored."""
        at = 0
        for loop in self.loops:
            n = len(loop.cells)
            results = [result for _, result in kept[at + 2:at + _steps_of(loop)]]
            rounds = len(results) // n
            steady = _steady_round(loop, results[:rounds * n])
            if steady is None and rounds < MAX_ROUNDS:
                return at + 2 + rounds * n if rounds else at
            at += 2 + (steady or MAX_ROUNDS) * n
        return max(at, len(kept))  # and every step after the loops it stored

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
        score = {"name": self.primary_score, "value": value, "unit": self.loops[0].figure.value,
                 "steady": all(lp["steady"]["reached"] for lp in loops), "loops": loops}
        return score if self.after is None else score | self.after.result(measured)


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
    return all(len(s) >= WINDOW_ROUNDS and measurement_window(s, len(s)).steady for s in series.values())


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
            if loop.with_latency:
                row[f"{cell.name} mean µs"] = round(figure_of(Figure.MEAN_US, result), 3)
            if loop.figure is Figure.MEAN_US:
                row[f"{cell.name} max"] = round(latency_of(result).max_ns / 1e3, 3)
        rounds.append(row)
    window = rounds[-WINDOW_ROUNDS:]
    means = {name: round(sum(r[name] for r in window) / len(window), 3) for name in window[0]} if window else {}
    tracked = {}
    for cell in loop.tracked:
        series = [r[cell.name] for r in rounds]
        w = measurement_window(series, len(series)) if len(series) >= WINDOW_ROUNDS else None
        tracked[cell.name] = {"series": series, "window": None if w is None else {
            "first_round": w.first_round, "last_round": w.last_round, "mean": w.mean,
            "data_excursion": w.data_excursion, "slope": w.slope, "slope_excursion": w.slope_excursion}}
    return {"name": loop.name, "figure": loop.figure.value, "cells": [c.name for c in loop.cells],
            "rounds": rounds, "window_means": means, "tracked": tracked,
            "steady": {"reached": steady_round is not None, "round": steady_round, "rounds_run": len(rounds),
                       "max_rounds": MAX_ROUNDS}}


@dataclass(frozen=True)
class Roundless(TestDef):
    """A PTS test without rounds: its workload straight from a purged drive, its settings the
    variant's."""

    __test__ = False  # not a pytest test class
    variant: Variant = CLIENT

    def span(self, scale: Scale) -> int:
        return 0  # from a purged drive: no data before

    def compile(self, scale: Scale, capacity: int) -> Test:
        test = super().compile(scale, capacity)
        return test.model_copy(update={"settings": self.variant.settings(scale)})


@dataclass(frozen=True)
class WriteSaturation(Roundless):
    """From a purged drive, 4 KiB random writes over the active range until four times the
    user capacity is written or 24 hours have passed: IOPS against time and data written."""

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = _active_range(self.variant, scale, capacity)
        total = WSAT_CAPACITIES * scale.whole_drive(capacity)
        return [Step(label=f"RND 4 KiB writes: {format_bytes(total)} or {scale.runtime(WSAT_S) / 3600:g} h",
                     rw=Op.RANDWRITE, bs=4 * KiB, iodepth=self.variant.threads * self.variant.queue_depth,
                     size=region, io_size=total, runtime=scale.runtime(WSAT_S))]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        (step, result), = measured
        window, points = curve(step, result)
        return {"name": self.primary_score, "value": _tail_mean(points, "iops"), "unit": "IOPS",
                "fob_iops": points[0]["iops"] if points else None, "window_s": window, "points": points,
                "written_gb": points[-1]["written_gb"] if points else 0.0}


@dataclass(frozen=True)
class CrossStimulus(Roundless):
    """From a purged drive, 128 KiB sequential writes for 8 hours, 4 KiB random writes for 6,
    sequential writes for 8 again, without a pause: how the drive recovers its sequential speed
    after random writes."""

    def workload(self, scale: Scale, capacity: int) -> list[Step]:
        region = _active_range(self.variant, scale, capacity)
        depth = self.variant.threads * self.variant.queue_depth
        return [Step(label=f"access {k}: {'SEQ 128 KiB' if bs > 4 * KiB else 'RND 4 KiB'} writes, "
                           f"{scale.runtime(hours * 3600) / 3600:g} h", rw=rw, bs=bs, iodepth=depth, size=region,
                     runtime=scale.runtime(hours * 3600), time_based=True)
                for k, (rw, bs, hours) in enumerate(XSR_ACCESSES, start=1)]

    def score(self, measured: scores.Measured) -> dict[str, Any]:
        accesses = []
        for step, result in measured:
            window, points = curve(step, result)
            accesses.append({"label": step.label, "window_s": window, "points": points,
                             "mbps": _tail_mean(points, "mbps"), "iops": _tail_mean(points, "iops")})
        before, after = accesses[0]["mbps"], accesses[-1]["mbps"]
        level = 0.9 * before if before else None
        recovered = next((p["t_s"] for p in accesses[-1]["points"] if level is not None and p["mbps"] >= level),
                         None)
        return {"name": self.primary_score, "value": after, "unit": "MB/s", "before_mbps": before,
                "recovered_after_s": recovered, "accesses": accesses}


def curve(step: Step, result: StepResult) -> tuple[float, list[dict[str, float]]]:
    """A long step's IOPS and MB/s per minute (per second in a step under 10 minutes), each
    with the data written by its end: the window and the points."""
    seconds = result.per_second
    window = CURVE_WINDOW_S if result.busy_s >= 10 * CURVE_WINDOW_S else 1.0
    points: list[dict[str, float]] = []
    written, start, ios, moved, t_end = 0.0, 0.0, 0.0, 0.0, 0.0
    for point in seconds:  # each point the interval that ends at t_s
        span = point.t_s - t_end
        ios, moved, t_end = ios + point.iops * span, moved + point.mbps * span, point.t_s
        if t_end - start >= window - 1e-9 or point is seconds[-1]:
            written += moved * 1e6
            points.append({"t_s": round(t_end, 3), "iops": round(ios / (t_end - start), 1),
                           "mbps": round(moved / (t_end - start), 1), "written_gb": round(written / 1e9, 3)})
            start, ios, moved = t_end, 0.0, 0.0
    return window, points


def _tail_mean(points: list[dict[str, float]], key: str) -> float | None:
    """The mean of `key` over the last tenth of the points (at least one)."""
    tail = points[-max(1, round(len(points) * CURVE_TAIL)):]
    return round(sum(p[key] for p in tail) / len(tail), 1) if tail else None


def _iops_loop() -> Loop:
    cells = tuple(Cell(share, bs) for share in IOPS_READ_SHARES for bs in IOPS_BLOCK_SIZES)
    return Loop("IOPS", cells, (Cell(0, 4 * KiB),), Figure.IOPS)


def _throughput_loop(bs: int) -> Loop:
    cells = (Cell(100, bs, sequential=True), Cell(0, bs, sequential=True))
    return Loop(f"throughput {format_bytes(bs)}", cells, cells, Figure.MBPS, wipc_bs=bs)


def _demand_loop() -> Loop:
    cells = tuple(Cell(65, 4 * KiB, threads=tc, depth=qd) for tc in DI_THREADS for qd in DI_DEPTHS)
    return Loop("demand intensity", cells, (cells[0],), Figure.IOPS, with_latency=True)


def _latency_loop() -> Loop:
    cells = tuple(Cell(share, bs) for share in LATENCY_READ_SHARES for bs in LATENCY_BLOCK_SIZES)
    return Loop("latency", cells, (Cell(0, 4 * KiB),), Figure.MEAN_US)


def _tests(variant: Variant, prefix: str) -> tuple[PtsTest | Roundless, ...]:
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
        PtsTest(id=f"{prefix}-hir", title=f"{name} host idle recovery: 4 KiB random writes to steady state, then "
                                          "5 s bursts after idles of 5, 10, 15, 25 and 50 s",
                primary_score="4 KiB random write IOPS in bursts after 50 s idles", variant=variant,
                loops=(Loop("steady state", (Cell(0, 4 * KiB),), (Cell(0, 4 * KiB),), Figure.IOPS),), threads=1,
                queue_depth=variant.threads * variant.queue_depth, after=IdleRecovery()),
        PtsTest(id=f"{prefix}-dirth", title=f"{name} demand intensity: 4 KiB 65/35 random at 7 thread counts x 7 "
                                            "queue depths to steady state, then the response-time histogram",
                primary_score="IOPS at the most demanding load with a mean response time under 5 ms",
                variant=variant, loops=(_demand_loop(),), threads=1, queue_depth=1,
                after=ResponseHistogram(Cell(65, 4 * KiB))),
        CrossStimulus(id=f"{prefix}-xsr", title=f"{name} cross stimulus recovery: sequential writes 8 h, random 6 h, "
                                                "sequential 8 h",
                      primary_score="128 KiB sequential write MB/s after the random writes (last tenth)",
                      variant=variant),
    )


PTS_TESTS = (*_tests(CLIENT, "pts"), *_tests(ENTERPRISE, "pts-e"))
