"""Section shapes of the lab and enterprise suites (METHODOLOGY.md sections 2 and 3),
recognised, like the client shapes, from the measured steps alone:

    trim       a measured TRIM             -> TRIM latency, sequential write before and after
    states     one workload, several fill  -> throughput per state and its per-second
               states                         curve (stability)
    cases      several QD1 write cases     -> maximum write latency per case
    qos        one random QD1 step without -> latency percentiles (mean to 99.99th)
               bursts

The block-size sweep is the client `bs` shape. Registered on import of the
package, after the client shapes, which none of these steps match.
"""

from __future__ import annotations

from ssdlab.model import Op
from ssdlab.report.charts import grouped_bars, slug, time_series
from ssdlab.report.data import TestGroup
from ssdlab.report.sections import ShapeView, distinct, shape, step_name
from ssdlab.store import StepRecord

PERCENTILES = (("mean", "mean_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"),
               ("p99.99", "p99_99_ns"))


@shape("trim", lambda steps: any(s.step.rw is Op.TRIM for s in steps))
def _trim(group: TestGroup, labels: list[str]) -> ShapeView:
    writes, latency, findings = [], [], []
    for tr in group.runs:
        steps = tr.measured
        trim = next((s for s in steps if s.step.rw is Op.TRIM), None)
        if trim is None or trim.result.trim is None:
            continue
        at = steps.index(trim)
        before = [s for s in steps[:at] if s.step.rw is not Op.TRIM]
        after = [s for s in steps[at + 1:] if s.step.rw is not Op.TRIM]
        # the writes just before and just after the TRIM
        for when, nearest in (("before TRIM", before[-1:]), ("after TRIM", after[:1])):
            writes += [{"run": tr.run.label, "group": when, "value": round(s.result.mbps, 2)}
                       for s in nearest]
        lat = trim.result.trim.latency
        latency += [{"run": tr.run.label, "group": "mean", "value": round(lat.mean_ns / 1e6, 3)},
                    {"run": tr.run.label, "group": "max", "value": round(lat.max_ns / 1e6, 3)}]
        findings.append(f"{tr.run.label}: {trim.result.trim.ios} TRIMs at "
                        f"{trim.result.trim.iops:,.0f} ops/s, mean {lat.mean_ns / 1e6:.3f} ms, "
                        f"max {lat.max_ns / 1e6:.3f} ms" + _before_after(before, after))
    charts = [grouped_bars(slug(group.id, "trim-latency"), f"{group.id}: TRIM latency",
                           latency, "TRIM latency (ms)", labels)] if latency else []
    if writes:
        charts.append(grouped_bars(slug(group.id, "write-around-trim"),
                                   f"{group.id}: sequential write just before and just after the TRIM",
                                   writes, "throughput (MB/s)", labels))
    return ShapeView(charts, findings)


def _before_after(before: list[StepRecord], after: list[StepRecord]) -> str:
    if not (before and after and before[-1].result.mbps):
        return ""
    ratio = after[0].result.mbps / before[-1].result.mbps
    return (f"; sequential write {before[-1].result.mbps:,.0f} MB/s before, "
            f"{after[0].result.mbps:,.0f} MB/s after ({(ratio - 1) * 100:+.0f} %)")


@shape("states", lambda steps: distinct(steps, lambda s: s.step.fill_state) > 1
       and distinct(steps, lambda s: (s.step.rw, s.step.bs, s.step.iodepth)) == 1)
def _states(group: TestGroup, labels: list[str]) -> ShapeView:
    random = group.measured[0][1].step.rw.is_random
    unit, axis = ("K IOPS", "I/O rate (K IOPS)") if random else ("MB/s", "throughput (MB/s)")

    def figure(value_mbps: float, value_iops: float) -> float:
        return round(value_iops / 1e3, 3) if random else round(value_mbps, 2)

    bars = [{"run": tr.run.label, "group": s.step.fill_state,
             "value": figure(s.result.mbps, s.result.iops)}
            for tr, s in group.measured if s.result.directions]
    curves = [{"run": tr.run.label, "state": s.step.fill_state, "t_s": p.t_s,
               "value": figure(p.mbps, p.iops)}
              for tr, s in group.measured for p in s.result.per_second]
    charts = [grouped_bars(slug(group.id, "per-state"), f"{group.id}: {unit} per fill state",
                           bars, axis, labels)]
    if curves:
        charts.append(time_series(slug(group.id, "stability"),
                                  f"{group.id}: {unit} per second in each fill state",
                                  curves, axis, "state", labels))
    return ShapeView(charts, [_state_finding(tr.run.label, tr.measured, unit, figure)
                              for tr in group.runs if len(tr.measured) > 1])


def _state_finding(label: str, steps: tuple[StepRecord, ...], unit: str, figure) -> str:
    first = steps[0]
    base = figure(first.result.mbps, first.result.iops)
    parts = [f"{first.step.fill_state} {base:,.1f} {unit}"]
    for s in steps[1:]:
        value = figure(s.result.mbps, s.result.iops)
        change = f" ({(value / base - 1) * 100:+.0f} %)" if base else ""
        parts.append(f"{s.step.fill_state} {value:,.1f} {unit}{change}")
    return f"{label}: " + ", ".join(parts)


@shape("cases", lambda steps: len(steps) > 1 and all(s.step.iodepth == 1 for s in steps)
       and all(s.step.rw.writes for s in steps)
       and distinct(steps, lambda s: (s.step.rw, s.step.bs, s.step.rate_iops, s.step.fill_state)) > 1)
def _cases(group: TestGroup, labels: list[str]) -> ShapeView:
    rows = [{"run": tr.run.label, "group": step_name(s),
             "value": round(s.result.write.latency.max_ns / 1e6, 3)}
            for tr, s in group.measured if s.result.write and s.result.write.ios]
    findings = []
    for tr in group.runs:
        worst = max((s for s in tr.measured if s.result.write and s.result.write.ios),
                    key=lambda s: s.result.write.latency.max_ns, default=None)
        if worst:
            findings.append(f"{tr.run.label}: the highest maximum, "
                            f"{worst.result.write.latency.max_ns / 1e6:,.3f} ms, in "
                            f"{step_name(worst)}")
    return ShapeView([grouped_bars(slug(group.id, "max-latency"),
                                   f"{group.id}: maximum write latency per case", rows,
                                   "maximum write latency (ms)", labels)], findings)


@shape("qos", lambda steps: len(steps) == 1 and steps[0].step.iodepth == 1
       and steps[0].step.rw.is_random and steps[0].step.burst_bytes is None)
def _qos(group: TestGroup, labels: list[str]) -> ShapeView:
    rows, findings = [], []
    for tr, s in group.measured:
        for direction, d in s.result.directions.items():
            rows += [{"run": tr.run.label, "group": f"{direction} {name}",
                      "value": round(getattr(d.latency, field) / 1e3, 2)}
                     for name, field in PERCENTILES]
            findings.append(f"{tr.run.label}: {d.iops:,.0f} IOPS, {direction} latency mean "
                            f"{d.latency.mean_ns / 1e3:,.1f} µs, 99th {d.latency.p99_ns / 1e3:,.1f} µs, "
                            f"99.99th {d.latency.p99_99_ns / 1e3:,.1f} µs over {d.ios:,} I/Os")
    return ShapeView([grouped_bars(slug(group.id, "latency-percentiles"),
                                   f"{group.id}: completion latency percentiles", rows,
                                   "completion latency (µs)", labels)], findings)
