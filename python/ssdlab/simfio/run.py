"""Running fio jobs on a simulated drive.

A job becomes one Step, run as a stream of pieces that continue one another (a
sequential job's next offset, the bytes left of its limit): one piece, or with
`thinktime` a piece per `thinktime_blocks` blocks, each followed by that much idle (the
drive works in it). `ramp_time` runs the stream for that long first, as fio does: its
I/O counts towards the job's size but not in its figures. `time_based` makes `runtime`
the only limit, and fio's runtime is the job's elapsed time, think time included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ssdlab.backends.sim import ENGINE, SimBackend
from ssdlab.catalogue.definitions import data_present
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import DirectionResult, Op, Step, StepResult
from ssdlab.model.steps import UNLIMITED_BYTES
from ssdlab.simfio.jobfile import FioJob
from ssdlab.simfio.options import SYNC_ENGINES
from ssdlab.simfio.values import ValueProblem, fio_bool, fio_int, fio_size, fio_time
from ssdlab.units import MiB, format_bytes

FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                   99.5, 99.9, 99.95, 99.99)
MAX_PERCENTILES = 20         # fio's FIO_IO_U_LIST_MAX_LEN

# The range of each value: what the simulator models, with a wide margin over what
# fio jobs ask for. A value outside is refused with the option's name and its range.
SECTOR = 512                 # the simulator's (and the Step's) unit of blocks and offsets
MAX_BS = 64 * MiB            # drives take a few MiB per command; Linux splits larger I/O
MAX_IODEPTH = 4096           # the simulator's queue
MAX_RUNTIME_S = 1e6          # the simulator's longest step (crates/ssdsim/src/bounds.rs)
RESOLUTION_S = 1e-6          # its shortest, and fio's time resolution
MAX_THINKTIME_S = 3600.0
MAX_THINKTIME_BLOCKS = (1 << 31) - 1   # fio's own limit (an int)
MAX_THINK_PIECES = 100_000   # thinktime runs a step per piece; more would take hours
DEFAULT_ENGINE = "psync"     # fio 3.33's on Linux (os/os.h)
CONTINUE_ON_ERROR = {"none": False, "0": False, "read": True, "write": True, "io": True,
                     "verify": True, "all": True, "1": True}
_PERCENTILE = re.compile(r"^\d{1,3}(\.\d{1,6})?$", re.ASCII)


@dataclass(frozen=True)
class Report:
    """What the job's JSON shows beside its figures, as fio's options set it."""

    jobname: str
    description: str | None
    percentiles: tuple[float, ...]
    clat_percentiles: bool
    lat_percentiles: bool
    slat_percentiles: bool
    continue_on_error: bool   # fio then adds its error counters
    disk_util: bool
    slat_measured: bool       # fio times no submission of a synchronous engine
    iodepth: int              # as the job asks it (fio's latency_depth)


@dataclass(frozen=True)
class JobPlan:
    step: Step              # its iodepth the queue fio keeps: 1 with a synchronous engine
    think_s: float          # idle after every `think_bytes` of I/O; 0 without thinktime
    think_bytes: int
    ramp_s: float           # run before the figures are taken; 0 without ramp_time
    whole_drive: bool       # no size= and no limit: the job goes over the whole drive once
    engine: str
    report: Report


@dataclass(frozen=True)
class JobRun:
    """A job's simulated outcome, with what fio's JSON needs beyond the step result."""

    result: StepResult               # its measured pieces merged
    piece_ios: tuple[int, ...]       # I/Os of each piece; each began with an empty queue
    series: tuple[tuple[float, float, float], ...]  # (start s, end s, I/Os completed) in job time
    ramp: StepResult | None          # what ramp_time ran: the drive's work, not the job's figures
    unwritten_read_bytes: int = 0    # of its reads, those of blocks never written (no NAND read)

    @property
    def elapsed_s(self) -> float:
        """The job's time, fio's runtime: its I/O and think time."""
        return self.result.busy_s + self.result.idle_s

    @property
    def drive_s(self) -> float:
        """The drive's time in the job, its ramp too."""
        return self.elapsed_s + (self.ramp.busy_s + self.ramp.idle_s if self.ramp else 0.0)


class _Options:
    """A job's options, each read in its form and checked against its range; a problem
    is a ValueProblem that names the option as the job file spells it."""

    def __init__(self, job: FioJob, device_bytes: int):
        self._settings = job.settings
        self.device_bytes = device_bytes
        base = self.given("kb_base")  # read first: the sizes depend on it
        self.kb_base = 1024 if base is None else self.parsed(*base, fio_int)
        if self.kb_base not in (1000, 1024):
            raise ValueProblem(f"{base[0]}={base[1]}: must be 1024 or 1000")

    def given(self, name: str) -> tuple[str, str] | None:
        """(name as spelled, value) of option `name`, when written with a value."""
        s = self._settings.get(name)
        return None if s is None or s.value is None else (s.spelled, s.value)

    def flag(self, name: str, default: bool = False) -> bool:
        """A flag is on when written bare or as 1, off as 0; else `default`."""
        s = self._settings.get(name)
        return default if s is None else self.parsed(s.spelled, s.value, fio_bool)

    def size(self, name: str, low: int, high: int) -> int | None:
        return self._read(name, self.bytes, low, high,
                          f"from {format_bytes(low)} to {format_bytes(high)}")

    def bytes(self, text: str) -> int:
        return fio_size(text, self.device_bytes, self.kb_base)

    def integer(self, name: str, low: int, high: int) -> int | None:
        return self._read(name, fio_int, low, high, f"from {low} to {high}")

    def seconds(self, name: str, unit: str, low: float, high: float) -> float | None:
        lowest = "more than 0 s and at most" if low > 0 else "from 0 s to"
        return self._read(name, lambda v: fio_time(v, unit), low, high,
                          f"{lowest} {high:,.0f} s")

    def _read(self, name: str, parse: Callable[[str], Any], low: Any, high: Any,
              allowed: str) -> Any:
        given = self.given(name)
        if given is None:
            return None
        value = self.parsed(*given, parse)
        if not low <= value <= high:
            raise ValueProblem(f"{given[0]}={given[1]}: must be {allowed}")
        return value

    @staticmethod
    def parsed(name: str, text: str | None, parse: Callable[[Any], Any]) -> Any:
        """`parse(text)`, a problem naming the option as `name=text`."""
        try:
            return parse(text)
        except ValueProblem as exc:
            raise ValueProblem(f"{name}={text}: {exc}") from None


def plan_all(jobs: list[FioJob], device_bytes: int, origin: str) -> list[JobPlan]:
    """The jobs as Steps (with their think and ramp time), every value checked before
    anything runs; a problem refuses them all, naming each job's first."""
    plans, problems = [], []
    for job in jobs:
        try:
            plans.append(_plan(job, _Options(job, device_bytes)))
        except ValueProblem as exc:
            problems.append(f"job [{job.name}] (line {job.line}): {exc}")
        except ValidationError as exc:  # a combination the Step refuses, each value in range
            problems.append(f"job [{job.name}] (line {job.line}): {validation_problems(exc)}")
    if problems:
        raise SsdlabError(f"{origin}: {'; '.join(problems)}")
    return plans


def plan(job: FioJob, device_bytes: int, origin: str) -> JobPlan:
    """One job's plan_all."""
    return plan_all([job], device_bytes, origin)[0]


def _plan(job: FioJob, o: _Options) -> JobPlan:
    # `or`: fio's default for an option not given (None); no valid value is 0 unless 0 is
    # also the default.
    op = _operation(o)
    bs = _block_size(o, op)
    offset = _offset(o, bs)
    room = (o.device_bytes - offset) // bs * bs
    size = o.size("size", bs, o.device_bytes - offset)
    # fio goes on with a sequential job while its next block starts inside the span; a
    # random one picks among the span's whole blocks
    span = room if size is None else min(room, _blocks(size, bs, up=not op.is_random))
    runtime = o.seconds("runtime", "s", RESOLUTION_S, MAX_RUNTIME_S)
    io_limit = o.size("io_size", bs, UNLIMITED_BYTES)
    if o.flag("time_based"):
        if runtime is None:
            raise ValueProblem("time_based needs a runtime")
        io_limit = UNLIMITED_BYTES
    engine = (o.given("ioengine") or ("", DEFAULT_ENGINE))[1]
    iodepth = o.integer("iodepth", 1, MAX_IODEPTH) or 1
    step = Step(label=job.name, rw=op, bs=bs, iodepth=1 if engine in SYNC_ENGINES else iodepth,
                rwmixread=_read_share(o) if op.is_mixed else None, offset=offset, size=span,
                runtime=runtime,
                io_size=None if io_limit is None else min(_blocks(io_limit, bs, up=True),
                                                          UNLIMITED_BYTES))
    think_s = o.seconds("thinktime", "us", 0.0, MAX_THINKTIME_S) or 0.0
    think_blocks = o.integer("thinktime_blocks", 1, MAX_THINKTIME_BLOCKS) or 1
    whole = size is None and runtime is None and io_limit is None
    ramp_s = o.seconds("ramp_time", "s", 0.0, MAX_RUNTIME_S) or 0.0
    return JobPlan(step, think_s, think_blocks * bs, ramp_s, whole, engine,
                   _report(job, o, engine, iodepth))


def _operation(o: _Options) -> Op:
    name, text = o.given("rw") or ("rw", "read")
    rw, colon, suffix = text.partition(":")
    try:
        op = Op("rw" if rw == "readwrite" else rw)
    except ValueError:
        raise ValueProblem(f"{name}={text}: not one of {', '.join(op.value for op in Op)} (random "
                           "trims and trim-then-write are not simulated yet)") from None
    if colon and op.is_random and suffix.strip() != "1":
        raise ValueProblem(f"{name}={text}: a new random offset only every {suffix} I/Os (with "
                           "sequential ones between) is not simulated yet")
    if colon and not op.is_random and not _is_zero_size(o, suffix):
        raise ValueProblem(f"{name}={text}: fio's suffix moves every next offset by {suffix} "
                           "(holes, or backwards), which is not simulated yet")
    return op


def _is_zero_size(o: _Options, text: str) -> bool:
    try:
        return o.bytes(text) == 0
    except ValueProblem:
        return False


def _block_size(o: _Options, op: Op) -> int:
    """fio's bs=READ,WRITE,TRIM: a size not followed by a comma goes on to the directions
    after it, an empty one is the default (4k). The simulator runs one size per job."""
    name, text = o.given("bs") or ("bs", "4k")
    fields = text.split(",")
    if len(fields) > 3:
        raise ValueProblem(f"{name}={text}: at most three sizes (reads, writes, trims)")

    def size(field: str) -> int:
        return o.bytes(field) if field.strip() else 4096

    sizes = o.parsed(name, text, lambda _: [size(fields[min(d, len(fields) - 1)]) for d in range(3)])
    used = {0, 1} if op.is_mixed else {2} if op is Op.TRIM else {1} if op.writes else {0}
    values = {sizes[d] for d in used}
    if len(values) > 1:
        raise ValueProblem(f"{name}={text}: different read and write block sizes in one job are "
                           "not simulated yet")
    bs = values.pop()
    if not SECTOR <= bs <= MAX_BS:
        raise ValueProblem(f"{name}={text}: must be from {format_bytes(SECTOR)} to {format_bytes(MAX_BS)}")
    if bs % SECTOR:
        raise ValueProblem(f"{name}={text}: must be a multiple of {SECTOR} bytes, the simulated "
                           "drive's sector")
    return bs


def _offset(o: _Options, bs: int) -> int:
    """fio takes an offset in bytes as written, and aligns a percentage up to the block size."""
    offset = o.size("offset", 0, o.device_bytes - bs) or 0
    name, text = o.given("offset") or ("offset", "0")
    if text.strip().endswith("%"):
        return min(_blocks(offset, bs, up=True), (o.device_bytes - bs) // bs * bs)
    if offset % SECTOR:
        raise ValueProblem(f"{name}={text}: must be a multiple of {SECTOR} bytes, the simulated "
                           "drive's sector (fio with direct=1 refuses it too)")
    return offset


def _blocks(n: int, bs: int, up: bool) -> int:
    """`n` bytes in whole blocks, rounded up or down."""
    return -(-n // bs) * bs if up else n // bs * bs


def _read_share(o: _Options) -> int:
    """rwmixread, else 100 - rwmixwrite, else half and half (fio's default)."""
    read = o.integer("rwmixread", 0, 100)
    if read is not None:
        return read
    write = o.integer("rwmixwrite", 0, 100)
    return 50 if write is None else 100 - write


def _report(job: FioJob, o: _Options, engine: str, iodepth: int) -> Report:
    name, on_error = o.given("continue_on_error") or ("continue_on_error", "none")
    if on_error.lower() not in CONTINUE_ON_ERROR:
        raise ValueProblem(f"{name}={on_error}: not one of {', '.join(CONTINUE_ON_ERROR)}")
    description = o.given("description")
    return Report(
        jobname=(o.given("name") or ("", job.name))[1], description=description and description[1],
        percentiles=_percentiles(o), clat_percentiles=o.flag("clat_percentiles", True),
        lat_percentiles=o.flag("lat_percentiles"), slat_percentiles=o.flag("slat_percentiles"),
        continue_on_error=CONTINUE_ON_ERROR[on_error.lower()], disk_util=o.flag("disk_util", True),
        slat_measured=engine not in SYNC_ENGINES, iodepth=iodepth)


def _percentiles(o: _Options) -> tuple[float, ...]:
    """percentile_list=Q:Q:...: fio sorts it and takes up to 20, each above 0 and at most 100."""
    given = o.given("percentile_list")
    if given is None:
        return FIO_PERCENTILES
    name, text = given
    fields = text.split(":")
    if len(fields) > MAX_PERCENTILES or not all(_PERCENTILE.match(f.strip()) for f in fields):
        raise ValueProblem(f"{name}={text}: write up to {MAX_PERCENTILES} percentiles separated "
                           "by colons, e.g. 50:99:99.9")
    values = sorted(float(f) for f in fields)
    if not 0 < values[0] <= values[-1] <= 100:
        raise ValueProblem(f"{name}={text}: each percentile must be above 0 and at most 100")
    return tuple(values)


def whole_drive_note(p: JobPlan) -> str:
    """Said before a job that has no limit runs: on a large drive it takes a while."""
    return (f"job [{p.step.label}] has no size=, io_size= or runtime=, so it simulates the "
            f"whole drive's capacity: {p.step.rw} of {format_bytes(p.step.size)} "
            f"({p.step.size:,} bytes); add size= for a shorter job")


def queue_note(p: JobPlan) -> str | None:
    """fio's own note when a synchronous engine caps the queue a job asks for."""
    if p.report.iodepth == p.step.iodepth:
        return None
    return (f"job [{p.step.label}]: ioengine={p.engine} is synchronous, so the queue depth is "
            f"capped at 1 (iodepth={p.report.iodepth} has no effect, as with fio; libaio or "
            "io_uring keep that many I/Os in flight)")


def run_job(backend: SimBackend, p: JobPlan) -> JobRun:
    stream = _Stream(backend, p)
    ramp = stream.run(p.ramp_s) if p.ramp_s else []
    pieces = stream.run(p.step.runtime)
    unwritten = sum(int((r.device or {}).get("unwritten_read_bytes", 0)) for r in pieces)
    return JobRun(merge(pieces), tuple(r.ios for r in pieces), _series(pieces),
                  merge(ramp) if ramp else None, unwritten)


def unwritten_note(name: str, run: JobRun) -> str | None:
    """Said after a job whose reads found blocks never written: a fresh drive answers them
    without reading its NAND, as real drives answer deallocated blocks, so those reads
    measure the controller, not the flash."""
    read = run.result.read
    if read is None or not read.bytes or not run.unwritten_read_bytes:
        return None
    share = min(100.0, run.unwritten_read_bytes / read.bytes * 100)  # read-ahead may look past the job
    return (f"job [{name}]: {share:.0f} % of its reads were of blocks never written, which the drive "
            "answers without reading its NAND (as real drives answer deallocated blocks): those figures "
            "are the controller's, not the flash's; --prefill writes the jobs' ranges first, as fio lays "
            "out a file before reading it")


def prefill_steps(plans: list[JobPlan]) -> list[Step]:
    """A sequential 128 KiB QD32 write of every range a job reads, each byte once, in order."""
    spans = sorted((p.step.offset, p.step.offset + p.step.size) for p in plans if p.step.rw.reads)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [Step.model_validate(data_present(end - start).model_dump() | {"offset": start, "label": "prefill"})
            for start, end in merged]


class _Stream:
    """The job's I/O as the drive receives it, in pieces that continue one another: a
    sequential job's next offset, the bytes left of its limit and of its think period."""

    def __init__(self, backend: SimBackend, p: JobPlan):
        self.backend = backend
        self.p = p
        self.done_bytes = 0
        self.since_think = 0

    def run(self, seconds: float | None) -> list[StepResult]:
        """Pieces until the job's bytes are done or `seconds` of its time have passed."""
        step, think_s, pieces, elapsed = self.p.step, self.p.think_s, [], 0.0
        while self.done_bytes < step.bytes_limit and (seconds is None or seconds - elapsed >= RESOLUTION_S):
            if len(pieces) == MAX_THINK_PIECES:
                raise SsdlabError(f"job [{step.label}]: thinktime runs a simulated step every "
                                  f"thinktime_blocks blocks, and {MAX_THINK_PIECES} steps did not "
                                  "finish the job: raise thinktime_blocks, or lower size, io_size "
                                  "or runtime")
            into_span = 0 if step.rw.is_random else self.done_bytes % step.size
            left = step.bytes_limit - self.done_bytes
            to_think = self.p.think_bytes - self.since_think if think_s else left
            # a piece wraps to its own offset: one that starts inside the span ends at the
            # span's end, and the next starts over at the span's start, as fio's job does
            io_size = min(left, to_think, step.size - into_span if into_span else left)
            pause = think_s if io_size == to_think else 0.0
            piece = step.model_copy(update=dict(
                offset=step.offset + into_span, size=step.size - into_span, io_size=io_size,
                runtime=None if seconds is None else seconds - elapsed, idle_after=pause))
            result = self.backend.run_step(Step.model_validate(piece.model_dump())).result
            pieces.append(result)
            moved = sum(d.bytes for d in result.directions.values())
            self.done_bytes += moved
            self.since_think = 0 if pause else self.since_think + moved
            elapsed += result.busy_s + result.idle_s
            if moved == 0:
                break
        return pieces


def _series(pieces: list[StepResult]) -> tuple[tuple[float, float, float], ...]:
    """The pieces' per-second series as intervals of the job's time: (start, end, I/Os)."""
    out, start = [], 0.0
    for r in pieces:
        begin = 0.0
        for point in r.per_second:
            out.append((start + begin, start + point.t_s, point.iops * (point.t_s - begin)))
            begin = point.t_s
        start += r.busy_s + r.idle_s
    return tuple(out)


def merge(pieces: list[StepResult]) -> StepResult:
    """Pieces as one result (histograms add up); no pieces (a ramp did all the I/O) is none."""
    if not pieces:
        return StepResult(started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                          busy_s=0.0, idle_s=0.0, engine=ENGINE)
    names = ("read", "write", "trim")
    merged = {n: DirectionResult.merge(getattr(r, n) for r in pieces if getattr(r, n))
              for n in names if any(getattr(r, n) for r in pieces)}
    return StepResult(started_at=pieces[0].started_at, busy_s=sum(r.busy_s for r in pieces),
                      idle_s=sum(r.idle_s for r in pieces), engine=pieces[0].engine, **merged)
