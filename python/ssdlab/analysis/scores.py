"""Primary scores of the client tests, as METHODOLOGY.md names them.

A score is a dict: `name` (what it means), `value` and `unit` (MB/s = 10^6
bytes/s), plus the figures a reviewer quotes beside it. When every scored
result knows its energy, the score also carries its efficiency: `mbps_per_w`
and `kiops_per_w` (means over the same results as the value).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from ssdlab.model import Step, StepResult
from ssdlab.units import GiB

Measured = Sequence[tuple[Step, StepResult]]

PRIMARY_QUEUE_DEPTHS = (1, 2, 4)


def efficiency(results: Sequence[StepResult]) -> dict[str, float]:
    """Mean MB/s per W and kIOPS per W of the results; empty unless all know their energy."""
    if not results or any(r.energy_j is None for r in results):
        return {}
    return {"mbps_per_w": round(fmean(r.mbps_per_w for r in results), 3),
            "kiops_per_w": round(fmean(r.kiops_per_w for r in results), 4)}


def throughput_score(name: str, measured: Measured) -> dict[str, Any]:
    """One measured step (bursts included): its MB/s and IOPS over busy time."""
    (_, result), = measured
    return {"name": name, "value": round(result.mbps, 2), "unit": "MB/s",
            "iops": round(result.iops, 1), **efficiency([result])}


def queue_depth_score(name: str, measured: Measured) -> dict[str, Any]:
    """Mean of QD1, QD2 and QD4; every QD's figures beside it for the scaling chart."""
    by_qd = {step.iodepth: result for step, result in measured}
    primary = [by_qd[qd] for qd in PRIMARY_QUEUE_DEPTHS if qd in by_qd]
    return {"name": name, "value": round(fmean(r.mbps for r in primary), 2), "unit": "MB/s",
            "iops": round(fmean(r.iops for r in primary), 1), **efficiency(primary),
            "by_qd": {str(qd): {"mbps": round(r.mbps, 2), "iops": round(r.iops, 1),
                                **efficiency([r])}
                      for qd, r in by_qd.items()}}


def mix_score(name: str, measured: Measured) -> dict[str, Any]:
    """Mean throughput over the mixes; the curve (read share -> MB/s) beside it."""
    curve = {str(step.rwmixread): round(result.mbps, 2) for step, result in measured}
    results = [r for _, r in measured]
    return {"name": name, "value": round(fmean(r.mbps for r in results), 2), "unit": "MB/s",
            **efficiency(results), "curve": curve}


def fill_score(name: str, measured: Measured) -> dict[str, Any]:
    """Overall mean over the whole fill (bytes / time), the mean over its last 16 GiB
    (the whole fill when it is shorter), and the SLC cache size and phases that
    `analysis.fill` reads from the curve."""
    from ssdlab.analysis.fill import analyze_fill  # here, not above: it loads numpy, a tenth of a second

    (_, result), = measured
    # A fill that wrote nothing has no series; its score must still be recorded.
    analysis = (analyze_fill(result.per_gib).to_json() if result.per_gib else
                {"last16_mbps": 0.0, "slc_cache_gib": None, "phases": [],
                 "finding": "no per-GiB series: nothing to read"})
    return {"name": name, "value": round(result.mbps, 2), "unit": "MB/s",
            "last16_mbps": analysis["last16_mbps"],
            "gib_written": round(result.bytes / GiB, 3), **efficiency([result]),
            "slc_cache_gib": analysis["slc_cache_gib"], "phases": analysis["phases"],
            "finding": analysis["finding"]}
