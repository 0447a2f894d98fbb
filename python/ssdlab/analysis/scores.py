"""Primary scores of the client tests, as METHODOLOGY.md names them.

A score is a dict: `name` (what it means), `value` and `unit` (MB/s = 10^6
bytes/s), plus the figures a reviewer quotes beside it.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, Sequence

from ssdlab.model import Step, StepResult
from ssdlab.units import GiB

Measured = Sequence[tuple[Step, StepResult]]

PRIMARY_QUEUE_DEPTHS = (1, 2, 4)
LAST_WINDOW = 16 * GiB


def throughput_score(name: str, measured: Measured) -> dict[str, Any]:
    """One measured step (bursts included): its MB/s and IOPS over busy time."""
    (_, result), = measured
    return {"name": name, "value": round(result.mbps, 2), "unit": "MB/s",
            "iops": round(result.iops, 1)}


def queue_depth_score(name: str, measured: Measured) -> dict[str, Any]:
    """Mean of QD1, QD2 and QD4; every QD's figures beside it for the scaling chart."""
    by_qd = {step.iodepth: result for step, result in measured}
    primary = [by_qd[qd] for qd in PRIMARY_QUEUE_DEPTHS if qd in by_qd]
    return {"name": name, "value": round(fmean(r.mbps for r in primary), 2), "unit": "MB/s",
            "iops": round(fmean(r.iops for r in primary), 1),
            "by_qd": {str(qd): {"mbps": round(r.mbps, 2), "iops": round(r.iops, 1)}
                      for qd, r in by_qd.items()}}


def mix_score(name: str, measured: Measured) -> dict[str, Any]:
    """Mean throughput over the mixes; the curve (read share -> MB/s) beside it."""
    curve = {str(step.rwmixread): round(result.mbps, 2) for step, result in measured}
    return {"name": name, "value": round(fmean(r.mbps for _, r in measured), 2), "unit": "MB/s",
            "curve": curve}


def fill_score(name: str, measured: Measured) -> dict[str, Any]:
    """Overall mean over the whole fill and mean over its last 16 GiB (the whole fill
    when it is shorter), both as bytes / time."""
    (_, result), = measured
    series = result.per_gib
    return {"name": name, "value": round(result.mbps, 2), "unit": "MB/s",
            "last16_mbps": round(window_mean(series, LAST_WINDOW), 2),
            "gib_written": round(result.bytes / GiB, 3)}


def window_mean(series, window_bytes: int) -> float:
    """Bytes over time of the segments that end within the last `window_bytes`."""
    if not series:
        return 0.0
    end = series[-1].gib
    start = max(0.0, end - window_bytes / GiB)
    seconds = 0.0
    nbytes = 0.0
    previous = 0.0
    for point in series:
        size = (point.gib - previous) * GiB
        if point.gib > start and point.mbps > 0:
            nbytes += size
            seconds += size / (point.mbps * 1e6)
        previous = point.gib
    return nbytes / seconds / 1e6 if seconds else 0.0
