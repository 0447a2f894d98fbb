"""fio's bandwidth log -> the per-second and per-GiB series of a step; fio's latency log ->
each I/O's latency.

A log line is `time_ms, value, direction, bs, offset[, prio]`, value in KiB/s
averaged over the window that ends at `time_ms`. Bytes of a window are value x
window length; the windows' sum is scaled to the bytes fio reports, so the
series add up exactly to the step's totals.

Per-GiB segments: 1 GiB when the step writes at least 16 GiB; otherwise the
bytes written / 16, rounded down to whole MiB, so a small-scale fill still has
a 16-point curve. `gib` is the amount written at a segment's end; its MB/s is
the segment's bytes over the time it took, interpolated inside log windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ssdlab.model import GibPoint, SecondPoint
from ssdlab.units import MB, GiB, MiB

SEGMENTS_WHEN_SHORT = 16


@dataclass(frozen=True)
class Window:
    end_s: float
    nbytes: float


def read_windows(path: Path) -> list[Window]:
    """Windows with all directions summed, in time order."""
    by_time: dict[int, float] = {}
    previous: dict[str, int] = {}
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            continue
        t_ms, kib_s, ddir = int(fields[0]), int(fields[1]), fields[2]
        start = previous.get(ddir, 0)
        previous[ddir] = t_ms
        by_time[t_ms] = by_time.get(t_ms, 0.0) + kib_s * 1024 * (t_ms - start) / 1000
    return [Window(t / 1000, b) for t, b in sorted(by_time.items())]


def read_latencies(path: Path) -> tuple[int, ...]:
    """Each read's latency (ns), in completion order, from an unaveraged latency log."""
    return tuple(c.latency_ns for c in _completions(path.read_text()) if c.ddir == 0)  # 0: read


@dataclass(frozen=True)
class Completion:
    t_ms: int      # fio's time of the I/O's completion, whole ms since the job started
    nbytes: int
    latency_ns: int = 0
    ddir: int = 0  # fio's direction: 0 read, 1 write, 2 trim


def read_completions(path: Path) -> list[Completion]:
    """Every I/O of an unaveraged latency log, in order; none when fio wrote no log."""
    try:
        return _completions(path.read_text())
    except FileNotFoundError:
        return []


def _completions(text: str) -> list[Completion]:
    """The lines of an unaveraged latency log (`log_avg_msec=0`: one line per I/O,
    `time_ms, latency_ns, direction, bs, ...`)."""
    found = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) >= 4:
            found.append(Completion(int(fields[0]), int(fields[3]), int(fields[1]), int(fields[2])))
    return found


def completion_windows(completions: list[Completion]) -> list[Window]:
    """The bytes completed in each millisecond, as windows ending at its end."""
    by_ms: dict[int, float] = {}
    for c in completions:
        by_ms[c.t_ms] = by_ms.get(c.t_ms, 0.0) + c.nbytes
    return [Window((t + 1) / 1000, b) for t, b in sorted(by_ms.items())]


def busy_from_completions(completions: list[Completion], runtime_s: float) -> float:
    """The run's busy time at a finer clock than fio's runtime (whole milliseconds since the
    job started, rounded up): when in its last millisecond its last I/O completed, from the
    rate at which I/Os completed in the whole milliseconds before (after the first, which
    holds the job's start). Kept inside the millisecond fio's runtime allows; fio's runtime
    when the I/Os completed within one millisecond."""
    if not completions:
        return runtime_s
    last = max(c.t_ms for c in completions)
    in_last = sum(1 for c in completions if c.t_ms == last)
    steady = [c for c in completions if 1 <= c.t_ms < last] if last >= 2 else \
        [c for c in completions if c.t_ms < last]
    if last < 1 or not steady:
        return runtime_s
    rate = len(steady) / (last - 1 if last >= 2 else last)  # I/Os per ms
    end_ms = last + min(in_last / rate, 1.0)
    return min(max(end_ms / 1000, runtime_s - 0.001), runtime_s)


def calibrated(windows: list[Window], total_bytes: int, busy_s: float) -> list[Window]:
    """Scale to fio's own byte count; put what the log missed at the end of the run."""
    logged = sum(w.nbytes for w in windows)
    if not windows or logged <= 0:
        return [Window(busy_s, float(total_bytes))] if busy_s > 0 else []
    last = windows[-1].end_s
    if busy_s > last + 1e-3:  # the final partial window fio did not log
        share = logged / last * (busy_s - last)
        windows = [*windows, Window(busy_s, share)]
        logged += share
    factor = total_bytes / logged
    return [Window(w.end_s, w.nbytes * factor) for w in windows]


def per_second(windows: list[Window], bs: int, offset_s: float = 0.0) -> tuple[SecondPoint, ...]:
    """One point per second of the run. A window's bytes are shared among the seconds it
    overlaps; a final part-second shorter than half a second joins the second before it."""
    if not windows:
        return ()
    end = windows[-1].end_s
    edges = [float(s) for s in range(int(end) + 1)] + [end]
    if len(edges) > 2 and end - edges[-2] < 0.5:
        del edges[-2]
    edges = sorted(set(edges))
    buckets = [0.0] * (len(edges) - 1)
    start = 0.0
    for w in windows:
        length = w.end_s - start
        for k in range(len(buckets)):
            overlap = min(w.end_s, edges[k + 1]) - max(start, edges[k])
            if overlap > 0 and length > 0:
                buckets[k] += w.nbytes * overlap / length
        start = w.end_s
    return tuple(SecondPoint(t_s=round(offset_s + edges[k + 1], 6),
                             mbps=nbytes / (edges[k + 1] - edges[k]) / MB,
                             iops=nbytes / bs / (edges[k + 1] - edges[k]))
                 for k, nbytes in enumerate(buckets))


def segment_bytes(total_bytes: int) -> int:
    if total_bytes >= 16 * GiB:
        return GiB
    return max(MiB, total_bytes // SEGMENTS_WHEN_SHORT // MiB * MiB)


def per_gib(windows: list[Window]) -> tuple[GibPoint, ...]:
    total = sum(w.nbytes for w in windows)
    if total <= 0:
        return ()
    segment = segment_bytes(int(round(total)))
    points = []
    boundary, boundary_time = segment, 0.0
    written, start_s = 0.0, 0.0
    for w in windows:
        rate = w.nbytes / (w.end_s - start_s) if w.end_s > start_s else 0.0
        while rate > 0 and written + w.nbytes >= boundary - 0.5:
            crossing = start_s + (boundary - written) / rate
            points.append(GibPoint(gib=boundary / GiB, mbps=segment / (crossing - boundary_time) / MB))
            boundary_time = crossing
            boundary += segment
        written += w.nbytes
        start_s = w.end_s
    if written - (boundary - segment) > MiB and start_s > boundary_time:  # a partial last segment
        tail = written - (boundary - segment)
        points.append(GibPoint(gib=written / GiB, mbps=tail / (start_s - boundary_time) / MB))
    return tuple(points)
