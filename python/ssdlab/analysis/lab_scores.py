"""Scores of the lab suite (fill states, TRIM, maximum write latency) and of the
enterprise QD1 suite, as METHODOLOGY.md sections 2 and 3 report them.

Same convention as `scores`: a dict with `name`, `value`, `unit` (MB/s = 10^6
bytes/s), plus every figure the methodology says is reported, per state, case or
block size, so that a report needs nothing else. Latencies: ms for maxima of the
lab suite, µs for QoS figures. A step that could not run on the target (512 B
direct I/O refused) has `measured: false` and its notes instead of figures, and
is left out of the primary value.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev
from typing import Any

from ssdlab.model import Op, Step, StepResult
from ssdlab.model.results import DirectionResult

Measured = Sequence[tuple[Step, StepResult]]


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _ran(result: StepResult) -> bool:
    return bool(result.directions)


def _not_measured(result: StepResult) -> dict[str, Any]:
    return {"measured": False, "notes": list(result.notes)}


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def curve_summary(result: StepResult, key: str = "mbps") -> dict[str, Any]:
    """The per-second curve and its stability: min, max, mean and coefficient of
    variation (standard deviation / mean) of the per-second values."""
    values = [getattr(p, key) for p in result.per_second]
    if not values:
        return {"points": 0}
    mean = fmean(values)
    scale, digits = (1e-3, 3) if key == "iops" else (1.0, 2)   # K IOPS for IOPS curves
    return {"points": len(values), "min": _r(min(values) * scale, digits),
            "max": _r(max(values) * scale, digits), "mean": _r(mean * scale, digits),
            "cov": _r(pstdev(values) / mean, 4) if mean else None,
            "curve": [[_r(p.t_s, 3), _r(getattr(p, key) * scale, digits)] for p in result.per_second]}


def _state_figures(result: StepResult, curve_key: str) -> dict[str, Any]:
    if not _ran(result):
        return _not_measured(result)
    lat = (result.write or result.read).latency
    return {"measured": True, "mbps": _r(result.mbps), "kiops": _r(result.iops / 1e3, 3),
            "mean_lat_us": _r(lat.mean_ns / 1e3), "max_lat_ms": _r(lat.max_ns / 1e6, 3),
            "busy_s": _r(result.busy_s, 3), "curve_unit": "MB/s" if curve_key == "mbps" else "K IOPS",
            "stability": curve_summary(result, curve_key)}


def states_mbps_score(name: str, measured: Measured) -> dict[str, Any]:
    """seq-write-states: MB/s per state (and its curve); value = mean over the states."""
    by_state = {step.fill_state or step.label: _state_figures(r, "mbps") for step, r in measured}
    ran = [r.mbps for _, r in measured if _ran(r)]
    return {"name": name, "value": _r(_mean(ran)), "unit": "MB/s", "by_state": by_state}


def states_kiops_score(name: str, measured: Measured) -> dict[str, Any]:
    """rand-write-states: K IOPS per state (and its curve); value = mean over the states."""
    by_state = {step.fill_state or step.label: _state_figures(r, "iops") for step, r in measured}
    ran = [r.iops / 1e3 for _, r in measured if _ran(r)]
    return {"name": name, "value": _r(_mean(ran), 3), "unit": "K IOPS", "by_state": by_state}


def trim_score(name: str, measured: Measured) -> dict[str, Any]:
    """TRIM ops/s, mean and max TRIM latency, and the sequential write just before and
    just after the TRIM."""
    trims = [(s, r) for s, r in measured if s.rw is Op.TRIM]
    writes = [(s, r) for s, r in measured if s.rw is not Op.TRIM]
    (trim_step, trim_result), = trims
    (_, before), (_, after) = writes
    trim: DirectionResult | None = trim_result.trim
    ops = trim.iops if trim else 0.0
    score: dict[str, Any] = {
        "name": name, "value": _r(ops), "unit": "ops/s",
        "trim_ops": trim.ios if trim else 0,
        "trim_range_bytes": trim_step.bs, "trimmed_bytes": trim.bytes if trim else 0,
        "trim_busy_s": _r(trim.busy_s, 4) if trim else None,
        "trim_mean_ms": _r(trim.latency.mean_ns / 1e6, 3) if trim else None,
        "trim_max_ms": _r(trim.latency.max_ns / 1e6, 3) if trim else None,
        "trim_p99_ms": _r(trim.latency.p99_ns / 1e6, 3) if trim else None,
        "write_before_mbps": _r(before.mbps), "write_after_mbps": _r(after.mbps),
        "after_over_before": _r(after.mbps / before.mbps, 3) if before.mbps else None,
        "write_before_stability": curve_summary(before), "write_after_stability": curve_summary(after),
    }
    if trim_result.notes:
        score["trim_notes"] = list(trim_result.notes)
    return score


def max_latency_score(name: str, measured: Measured) -> dict[str, Any]:
    """Maximum write latency in ms per case; value = the highest of them."""
    by_case: dict[str, Any] = {}
    for step, result in measured:
        if result.write is None or not result.write.ios:
            by_case[step.label] = _not_measured(result)
            continue
        lat = result.write.latency
        by_case[step.label] = {
            "measured": True, "max_ms": _r(lat.max_ns / 1e6, 3), "mean_us": _r(lat.mean_ns / 1e3),
            "p99_us": _r(lat.p99_ns / 1e3), "p99_99_us": _r(lat.p99_99_ns / 1e3),
            "write_ios": result.write.ios, "write_iops": _r(result.write.iops, 1),
            "fill_state": step.fill_state, "bs": step.bs, "rate_iops": step.rate_iops}
    maxima = [c["max_ms"] for c in by_case.values() if c["measured"]]
    return {"name": name, "value": max(maxima) if maxima else None, "unit": "ms",
            "by_case": by_case}


def qos_score(name: str, measured: Measured) -> dict[str, Any]:
    """IOPS, with mean, 99th and 99.99th percentile latency (µs) of the one direction."""
    (step, result), = measured
    d = result.read if step.rw is Op.RANDREAD else result.write
    if d is None or not d.ios:
        return {"name": name, "value": None, "unit": "IOPS", **_not_measured(result)}
    lat = d.latency
    return {"name": name, "value": _r(d.iops, 1), "unit": "IOPS", "mbps": _r(d.mbps),
            "mean_us": _r(lat.mean_ns / 1e3), "p99_us": _r(lat.p99_ns / 1e3),
            "p99_9_us": _r(lat.p99_9_ns / 1e3), "p99_99_us": _r(lat.p99_99_ns / 1e3),
            "max_us": _r(lat.max_ns / 1e3), "ios": d.ios,
            "beyond_p99_99": d.ios // 10_000}  # how many completions the 99.99th rests on


def qd1_mbps_score(name: str, measured: Measured) -> dict[str, Any]:
    (_, result), = measured
    d = result.read or result.write
    return {"name": name, "value": _r(result.mbps), "unit": "MB/s", "iops": _r(result.iops, 1),
            "mean_lat_us": _r(d.latency.mean_ns / 1e3) if d else None,
            "stability": curve_summary(result)}


def bs_sweep_score(name: str, measured: Measured) -> dict[str, Any]:
    """IOPS and MB/s per pattern per block size; value = mean MB/s over the points."""
    by_pattern: dict[str, dict[str, Any]] = {}
    for step, result in measured:
        point = ({"measured": True, "iops": _r(result.iops, 1), "mbps": _r(result.mbps),
                  "mean_lat_us": _r(next(iter(result.directions.values())).latency.mean_ns / 1e3)}
                 if _ran(result) else _not_measured(result))
        by_pattern.setdefault(step.rw.value, {})[str(step.bs)] = point
    ran = [r.mbps for _, r in measured if _ran(r)]
    return {"name": name, "value": _r(_mean(ran)), "unit": "MB/s",
            "block_sizes": sorted({s.bs for s, _ in measured}), "by_pattern": by_pattern}
