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
    """Each read's latency (ns), in completion order, from an unaveraged latency log
    (`log_avg_msec=0`: one line per I/O, `time_ms, latency_ns, direction, bs, offset`)."""
    found = []
    for line in path.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) >= 3 and fields[2] == "0":  # direction 0: read
            found.append(int(fields[1]))
    return tuple(found)


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
