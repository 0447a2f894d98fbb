"""Running fio jobs on a simulated drive and answering in fio's JSON.

A job becomes one Step. With `thinktime` it becomes a Step per `thinktime_blocks`
blocks, each followed by that much idle (the drive works in it), until the job's
byte or time limit; the pieces are merged exactly (histograms add up).
`time_based` makes `runtime` the only limit. The output carries the fields
fio's JSON has and ssdlab's fio backend reads, in fio's units (runtime in ms,
bw in KiB/s, latencies in ns, json+ histogram bins).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ssdlab import __version__
from ssdlab.backends.sim import SimBackend
from ssdlab.errors import SsdlabError, validation_problems
from ssdlab.model import DirectionResult, Latency, Op, Step, StepResult
from ssdlab.model.results import clamped_percentile
from ssdlab.model.steps import UNLIMITED_BYTES
from ssdlab.simfio.jobfile import FioJob
from ssdlab.simfio.values import ValueProblem, fio_bool, fio_int, fio_size, fio_time
from ssdlab.units import MiB, format_bytes

FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                   99.5, 99.9, 99.95, 99.99)

# The range of each value: what the simulator models, with a wide margin over what
# fio jobs ask for. A value outside is refused with the option's name and its range.
SECTOR = 512                 # the simulator's (and the Step's) unit of blocks and offsets
MAX_BS = 64 * MiB            # drives take a few MiB per command; Linux splits larger I/O
MAX_IODEPTH = 4096           # the simulator's queue
MAX_RUNTIME_S = 1e6          # the simulator's longest step (crates/ssdsim/src/bounds.rs)
MAX_THINKTIME_S = 3600.0
MAX_THINKTIME_BLOCKS = (1 << 31) - 1   # fio's own limit (an int)
MAX_THINK_PIECES = 100_000   # thinktime runs a step per piece; more would take hours


@dataclass(frozen=True)
class JobPlan:
    step: Step
    think_s: float          # idle after every `think_bytes` of I/O; 0 without thinktime
    think_bytes: int
    whole_drive: bool       # no size= and no limit: the job goes over the whole drive once


class _Options:
    """A job's options, each read in its form and checked against its range; a problem
    is a ValueProblem that names the option as the job file spells it."""

    def __init__(self, job: FioJob, device_bytes: int):
        self._options = job.options
        self.device_bytes = device_bytes

    def given(self, *names: str) -> tuple[str, str] | None:
        """(name, value) of the first of `names` (synonyms) written with a value."""
        return next(((n, self._options[n]) for n in names if self._options.get(n) is not None),
                    None)

    def flag(self, name: str) -> bool:
        """A flag is on when written, bare or as 1."""
        return name in self._options and self._parsed(name, self._options[name], fio_bool)

    def size(self, names: tuple[str, ...], low: int, high: int) -> int | None:
        return self._read(names, lambda v: fio_size(v, self.device_bytes), low, high,
                          f"from {format_bytes(low)} to {format_bytes(high)}")

    def integer(self, names: tuple[str, ...], low: int, high: int) -> int | None:
        return self._read(names, fio_int, low, high, f"from {low} to {high}")

    def seconds(self, name: str, unit: str, low: float, high: float) -> float | None:
        lowest = "more than 0 s and at most" if low > 0 else "from 0 s to"
        return self._read((name,), lambda v: fio_time(v, unit), low, high,
                          f"{lowest} {high:,.0f} s")

    def _read(self, names: tuple[str, ...], parse: Callable[[str], Any], low: Any, high: Any,
              allowed: str) -> Any:
        """The value of the first of `names` given, None when none is."""
        given = self.given(*names)
        if given is None:
            return None
        value = self._parsed(*given, parse)
        if not low <= value <= high:
            raise ValueProblem(f"{given[0]}={given[1]}: must be {allowed}")
        return value

    @staticmethod
    def _parsed(name: str, text: str | None, parse: Callable[[Any], Any]) -> Any:
        try:
            return parse(text)
        except ValueProblem as exc:
            raise ValueProblem(f"{name}={text}: {exc}") from None


def plan(job: FioJob, device_bytes: int, origin: str) -> JobPlan:
    """The job as a Step (and its think time), every value checked before anything runs."""
    try:
        return _plan(job.name, _Options(job, device_bytes))
    except ValueProblem as exc:
        raise SsdlabError(f"{origin}: job [{job.name}] (line {job.line}): {exc}") from None
    except ValidationError as exc:  # a combination the Step refuses, each value in range
        raise SsdlabError(f"{origin}: job [{job.name}] (line {job.line}): "
                          f"{validation_problems(exc)}") from None


def _plan(name: str, o: _Options) -> JobPlan:
    # `or`: fio's default for an option not given (None); no valid value is 0 unless 0 is
    # also the default.
    op = _operation(o)
    bs = o.size(("bs", "blocksize"), SECTOR, MAX_BS) or 4096
    if bs % SECTOR:
        raise ValueProblem(f"bs={bs}: must be a multiple of {SECTOR} bytes")
    offset = (o.size(("offset",), 0, o.device_bytes - bs) or 0) // bs * bs
    span = o.device_bytes - offset
    size = (o.size(("size",), bs, span) or span) // bs * bs
    runtime = o.seconds("runtime", "s", 1e-6, MAX_RUNTIME_S)  # 1 us: fio's resolution
    io_limit = o.size(("io_size", "io_limit"), bs, UNLIMITED_BYTES)
    if o.flag("time_based"):
        if runtime is None:
            raise ValueProblem("time_based needs a runtime")
        io_limit = UNLIMITED_BYTES
    step = Step(label=name, rw=op, bs=bs, iodepth=o.integer(("iodepth",), 1, MAX_IODEPTH) or 1,
                rwmixread=_read_share(o) if op.is_mixed else None, offset=offset, size=size,
                runtime=runtime, io_size=None if io_limit is None else io_limit // bs * bs)
    think_s = o.seconds("thinktime", "us", 0.0, MAX_THINKTIME_S) or 0.0
    think_blocks = o.integer(("thinktime_blocks",), 1, MAX_THINKTIME_BLOCKS) or 1
    whole = o.given("size") is None and runtime is None and io_limit is None
    return JobPlan(step, think_s, think_blocks * bs, whole)


def _operation(o: _Options) -> Op:
    name, rw = o.given("rw", "readwrite") or ("rw", "read")
    try:
        return Op("rw" if rw == "readwrite" else rw)
    except ValueError:
        raise ValueProblem(f"{name}={rw}: not one of {', '.join(op.value for op in Op)}") from None


def _read_share(o: _Options) -> int:
    """rwmixread, else 100 - rwmixwrite, else half and half (fio's default)."""
    read = o.integer(("rwmixread",), 0, 100)
    if read is not None:
        return read
    write = o.integer(("rwmixwrite",), 0, 100)
    return 50 if write is None else 100 - write


def whole_drive_note(p: JobPlan) -> str:
    """Said before a job that has no limit runs: on a large drive it takes a while."""
    return (f"job [{p.step.label}] has no size=, io_size= or runtime=, so it simulates the "
            f"whole drive's capacity: {p.step.rw} of {format_bytes(p.step.size)} "
            f"({p.step.size:,} bytes); add size= for a shorter job")


def run_job(backend: SimBackend, p: JobPlan) -> StepResult:
    if not p.think_s:
        return backend.run_step(p.step).result
    # thinktime: pieces of think_bytes, each then idle; sequential pieces continue the stream
    pieces: list[StepResult] = []
    done_bytes, busy = 0, 0.0
    limit = p.step.bytes_limit
    while done_bytes < limit and (p.step.runtime is None or busy < p.step.runtime):
        if len(pieces) == MAX_THINK_PIECES:
            raise SsdlabError(f"job [{p.step.label}]: thinktime runs a simulated step every "
                              f"thinktime_blocks blocks, and {MAX_THINK_PIECES} steps did not "
                              "finish the job: raise thinktime_blocks, or lower size, io_size "
                              "or runtime")
        chunk = min(p.think_bytes, limit - done_bytes)
        offset = p.step.offset + (0 if p.step.rw.is_random else done_bytes % p.step.size)
        span = p.step.size - (offset - p.step.offset)
        piece = p.step.model_copy(update=dict(
            offset=offset, size=max(span // p.step.bs * p.step.bs, p.step.bs), io_size=chunk,
            runtime=None if p.step.runtime is None else p.step.runtime - busy, idle_after=p.think_s))
        result = backend.run_step(Step.model_validate(piece.model_dump())).result
        pieces.append(result)
        moved = sum(d.bytes for d in result.directions.values())
        done_bytes += moved
        busy += result.busy_s
        if moved == 0:
            break
    return merge(pieces)


def merge(pieces: list[StepResult]) -> StepResult:
    names = ("read", "write", "trim")
    merged = {n: DirectionResult.merge(getattr(r, n) for r in pieces if getattr(r, n))
              for n in names if any(getattr(r, n) for r in pieces)}
    return StepResult(started_at=pieces[0].started_at, busy_s=sum(r.busy_s for r in pieces),
                      idle_s=sum(r.idle_s for r in pieces), engine=pieces[0].engine, **merged)


def fio_json(jobs: list[tuple[FioJob, StepResult]], preset: str) -> dict[str, Any]:
    now = time.time()
    return {
        "fio version": f"ssdlab-sim-{__version__}",
        "timestamp": int(now), "timestamp_ms": int(now * 1000),
        "time": time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)),
        "global options": {"simulated_drive": preset},
        "jobs": [_job_json(index, job, result) for index, (job, result) in enumerate(jobs)],
    }


def _job_json(index: int, job: FioJob, r: StepResult) -> dict[str, Any]:
    # fio's runtime is the job's elapsed time: think time included
    elapsed = r.busy_s + r.idle_s
    return {"jobname": job.name, "groupid": index, "error": 0, "elapsed": math.ceil(elapsed),
            "job options": {k: v for k, v in job.options.items() if v is not None},
            **{name: _direction_json(getattr(r, name), r.idle_s)
               for name in ("read", "write", "trim")},
            "job_runtime": round(elapsed * 1000)}


def _direction_json(d: DirectionResult | None, think_s: float) -> dict[str, Any]:
    if d is None or d.ios == 0:
        zero = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
        return {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
                "total_ios": 0, "short_ios": 0, "drop_ios": 0, "clat_ns": zero, "lat_ns": zero}
    lat = d.latency
    seconds = d.busy_s + think_s
    clat = {"min": lat.min_ns, "max": lat.max_ns, "mean": lat.mean_ns, "stddev": _stddev(lat),
            "N": lat.count,
            "percentile": {f"{q:.6f}": _percentile(lat, q) for q in FIO_PERCENTILES},
            "bins": {str(v): c for v, c in lat.histogram}}
    return {"io_bytes": d.bytes, "io_kbytes": d.bytes // 1024, "bw_bytes": round(d.bytes / seconds),
            "bw": round(d.bytes / seconds / 1024), "iops": d.ios / seconds,
            "runtime": round(seconds * 1000),
            "total_ios": d.ios, "short_ios": 0, "drop_ios": 0, "clat_ns": clat,
            "lat_ns": {k: clat[k] for k in ("min", "max", "mean", "stddev", "N")}}


def _percentile(lat: Latency, q: float) -> int:
    return clamped_percentile(lat.histogram, lat.count, q, lat.min_ns, lat.max_ns)


def _stddev(lat: Latency) -> float:
    var = sum(c * (v - lat.mean_ns) ** 2 for v, c in lat.histogram) / lat.count
    return math.sqrt(var)
