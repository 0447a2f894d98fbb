"""Step -> fio job file. One job per fio invocation, fio's own option names, so the
stored text can be run again by hand with `fio JOBFILE`.

Limits keep fio's meaning: `runtime` and `io_size` without `time_based`, so the
job ends at whichever comes first; with `io_size` larger than `size` fio loops
over the span. Runtime is written in milliseconds so fractional seconds from
--scale survive. `rate_iops` is fio's own: fio spaces the I/Os so that no more
than that many complete per second (the light-load cases).

TRIM (`rw=trim`) is a discard of each block on a block device. fio cannot
discard a range of a regular file (its engines send BLKDISCARD, which a file
answers with ENOTTY), so on a file target the backend runs TRIM steps with fio's
`falloc` engine, which punches a hole (fallocate PUNCH_HOLE) per block: what a
filesystem does when a file's data is deleted; see FioBackend.

Idle-wake idles inside fio (`thinktime` after every I/O, `thinktime_blocks=1`): the idle
then ends exactly when the next read is issued, with no process start-up (about 0.3 s)
between them, and 10 ms idles are possible. fio's per-I/O latency log times each read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ssdlab.model import Step

PERCENTILES = "50:99:99.9:99.99"
# Bandwidth samples averaged over this window: fine enough for a per-GiB curve at
# several GB/s (a GiB takes ~150 ms at 7 GB/s), coarse enough to cost nothing.
LOG_AVG_MSEC = 50
PER_IO_LOG_MAX = 65536   # I/Os of a run that logs each one: about 2 MB of log


@dataclass(frozen=True)
class Invocation:
    """One fio run of a step: the whole step, or one of its bursts."""

    offset: int
    io_size: int | None
    randseed: int

    @classmethod
    def for_burst(cls, step: Step, index: int) -> Invocation:
        """Random bursts differ by seed; sequential bursts continue where the last ended."""
        burst = step.burst_bytes
        if burst is None:
            return cls(offset=step.offset, io_size=step.io_size, randseed=1)
        slots = 1 if step.rw.is_random else max(1, step.size // burst)
        return cls(offset=step.offset + (index % slots) * burst, io_size=burst, randseed=index + 1)


def logs_each_io(step: Step, invocation: Invocation) -> bool:
    """A run of at most PER_IO_LOG_MAX I/Os logs each one (its log stays small)."""
    if step.time_based:
        return False
    nbytes = invocation.io_size if invocation.io_size is not None else step.bytes_limit
    return nbytes // step.bs <= PER_IO_LOG_MAX


def random_distribution(step: Step) -> str | None:
    """fio's `random_distribution` of the step; None for uniform, fio's default."""
    spread = step.distribution
    match spread.kind:
        case "zipf":
            return f"zipf:{spread.theta:g}"
        case "pareto":
            return f"pareto:{spread.h:g}"
        case "normal":
            return f"normal:{spread.dev_pct:g}"
        case "zoned":  # extents in % of the span
            return "zoned:" + ":".join(f"{z.access_pct:g}/{z.extent:g}" for z in spread.zones)
        case "zoned_abs":  # extents in bytes
            return "zoned_abs:" + ":".join(f"{z.access_pct:g}/{int(z.extent)}" for z in spread.zones)
    return None


def section(step: Step) -> str:
    """The job's section line, named after the step."""
    return f"[{step.label.replace(' ', '_').replace(']', '').replace('[', '') or 'step'}]"


def job_text(step: Step, path: Path, ioengine: str, invocation: Invocation, log_prefix: Path,
             thinktime_s: float | None = None, options: Mapping[str, str] | None = None) -> str:
    """With `thinktime_s` (idle-wake), fio idles that long after every I/O (none for 0). That
    run, and a run of at most PER_IO_LOG_MAX I/Os (one too short, at small scale, for fio's
    whole milliseconds to time), log each I/O's latency and completion (`write_lat_log`,
    unaveraged) instead of the averaged bandwidth. `options` replace the step's own and add to
    them (the retention test's verify pattern: backends/fio/verify.py)."""
    size = step.size - (invocation.offset - step.offset)
    lines = [
        section(step),
        f"filename={path}",
        f"ioengine={ioengine}",
        "direct=1",
        f"rw={step.rw.value}",
        f"bs={step.bs}",
        f"iodepth={step.iodepth}",
        f"offset={invocation.offset}",
        f"size={size}",
    ]
    if invocation.io_size is not None:
        lines.append(f"io_size={invocation.io_size}")
    if step.runtime is not None:
        lines.append(f"runtime={max(1, round(step.runtime * 1000))}ms")
    if step.time_based:
        lines.append("time_based=1")
    if step.rwmixread is not None:
        lines.append(f"rwmixread={step.rwmixread}")
    if step.rate_iops is not None:
        lines.append(f"rate_iops={step.rate_iops}")
    if step.rw.is_random:
        lines.append(f"randseed={invocation.randseed}")
    if step.bssplit:
        lines.append("bssplit=" + ":".join(f"{part.bs}/{part.pct:g}" for part in step.bssplit))
    if (spread := random_distribution(step)) is not None:
        lines.append(f"random_distribution={spread}")
    if thinktime_s:
        lines += [f"thinktime={round(thinktime_s * 1e6)}us", "thinktime_blocks=1"]
    lines.append(f"percentile_list={PERCENTILES}")
    if thinktime_s is None and not logs_each_io(step, invocation):
        lines += [f"write_bw_log={log_prefix}", f"log_avg_msec={LOG_AVG_MSEC}"]
    else:
        lines += [f"write_lat_log={log_prefix}", "log_avg_msec=0"]
    lines.append("group_reporting=1")
    if options:
        given = {line.partition("=")[0] for line in lines[1:]}
        lines = [lines[0], *(f"{key}={options[key]}" if key in options else f"{key}={value}"
                             for key, _, value in (line.partition("=") for line in lines[1:])),
                 *(f"{key}={value}" for key, value in options.items() if key not in given)]
    return "\n".join(lines) + "\n"
