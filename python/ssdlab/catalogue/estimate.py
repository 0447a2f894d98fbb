"""How long steps take, roughly, before anything is measured: for `--dry-run` and the
first ETA. The rates are those of a typical PCIe 3.0 TLC NVMe drive; real runs
refine the ETA from measured progress. A rate-limited step takes its I/Os over
the rate; a TRIM moves no data and is estimated at TRIM_MBPS of LBA range. A trace replayed in
time lasts at least as long as the trace, as replayed (traces/cache.py keeps that)."""

from __future__ import annotations

from pathlib import Path

from ssdlab.model import Op, Phase, Step
from ssdlab.traces.fit import Prepared
from ssdlab.units import MB

PURGE_S = 2.0
# (MB/s per outstanding command, MB/s ceiling)
RANDOM_RATE = (60.0, 1500.0)
SEQUENTIAL_RATE = (1500.0, 3000.0)
TRIM_MBPS = 20000.0


def nominal_mbps(step: Step) -> float:
    per_qd, ceiling = RANDOM_RATE if step.rw.is_random else SEQUENTIAL_RATE
    return min(per_qd * step.iodepth * step.bs / 4096 if step.rw.is_random else per_qd * step.iodepth,
               ceiling)


def busy_seconds(step: Step) -> float:
    if step.phase is Phase.PURGE:
        return PURGE_S
    if step.phase in (Phase.AGE, Phase.OFF):
        return 0.0  # states the simulator sets, in no drive time
    if step.trace is not None:
        found = Prepared.of(Path(step.trace.path))
        if found is None:
            return 0.0
        moved = (found.bytes["read"] + found.bytes["write"]) / (nominal_mbps(step) * MB)
        return max(moved, found.duration_us / 1e6 if step.trace.timed else 0.0)
    if step.rw is Op.TRIM:
        seconds = step.bytes_limit / (TRIM_MBPS * MB)
    elif step.rate_iops is not None:
        seconds = max(step.bytes_limit / (nominal_mbps(step) * MB),
                      step.bytes_limit / step.bs / step.rate_iops)
    else:
        seconds = step.bytes_limit / (nominal_mbps(step) * MB)
    return min(seconds, step.runtime) if step.runtime is not None else seconds


def step_seconds(step: Step, thinktime_s: float = 0.0) -> float:
    """`thinktime_s`: fio's idle after every I/O (idle-wake's timed reads)."""
    busy = busy_seconds(step)
    idle = busy * (1 - step.duty_cycle) / step.duty_cycle if step.duty_cycle else 0.0
    return busy + idle + step.idle_after + thinktime_s * (step.bytes_limit // step.bs)
