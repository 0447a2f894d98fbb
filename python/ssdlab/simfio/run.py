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
from dataclasses import dataclass
from typing import Any

from ssdlab import __version__
from ssdlab.backends.sim import SimBackend
from ssdlab.errors import SsdlabError
from ssdlab.model import DirectionResult, Latency, Op, Step, StepResult
from ssdlab.model.results import clamped_percentile
from ssdlab.simfio.jobfile import FioJob
from ssdlab.simfio.values import ValueProblem, fio_bool, fio_size, fio_time

UNLIMITED_BYTES = 1 << 62   # time_based: only the runtime ends the job
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                   99.5, 99.9, 99.95, 99.99)


@dataclass(frozen=True)
class JobPlan:
    step: Step
    think_s: float          # idle after every `think_bytes` of I/O; 0 without thinktime
    think_bytes: int


def plan(job: FioJob, device_bytes: int, origin: str) -> JobPlan:
    o = job.options

    def value(key: str, default: str | None = None) -> str | None:
        return o.get(key, default) if o.get(key, default) is not None else default

    try:
        rw = value("rw") or value("readwrite") or "read"
        rw = "rw" if rw == "readwrite" else rw
        try:
            op = Op(rw)
        except ValueError:
            raise ValueProblem(f"rw={rw} is not one of {', '.join(o.value for o in Op)}") from None
        bs = fio_size(value("bs") or value("blocksize") or "4k", device_bytes)
        offset = fio_size(value("offset", "0"), device_bytes) // bs * bs
        size = fio_size(value("size"), device_bytes) if "size" in o else device_bytes - offset
        size = size // bs * bs
        io_size = value("io_size") or value("io_limit")
        runtime = fio_time(value("runtime"), "s") if value("runtime") else None
        if "time_based" in o and fio_bool(o["time_based"]):
            if runtime is None:
                raise ValueProblem("time_based needs a runtime")
            io_limit: int | None = UNLIMITED_BYTES
        else:
            io_limit = fio_size(io_size, device_bytes) // bs * bs if io_size else None
        mix = None
        if op.is_mixed:
            mix = int(value("rwmixread")) if "rwmixread" in o else (
                100 - int(value("rwmixwrite")) if "rwmixwrite" in o else 50)
        think_s = fio_time(value("thinktime"), "us") if value("thinktime") else 0.0
        think_bytes = int(value("thinktime_blocks", "1")) * bs
        step = Step(label=job.name, rw=op, bs=bs, iodepth=int(value("iodepth", "1")),
                    rwmixread=mix, offset=offset, size=size, runtime=runtime, io_size=io_limit)
    except (ValueProblem, ValueError) as exc:
        raise SsdlabError(f"{origin}: job [{job.name}] (line {job.line}): {exc}") from None
    return JobPlan(step, think_s, think_bytes)


def run_job(backend: SimBackend, p: JobPlan) -> StepResult:
    if not p.think_s:
        return backend.run_step(p.step).result
    # thinktime: pieces of think_bytes, each then idle; sequential pieces continue the stream
    pieces: list[StepResult] = []
    done_bytes, busy = 0, 0.0
    limit = p.step.bytes_limit
    while done_bytes < limit and (p.step.runtime is None or busy < p.step.runtime):
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
