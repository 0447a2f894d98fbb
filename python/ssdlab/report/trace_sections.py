"""The report of a trace test (catalogue/trace.py): each trace on the empty and the full drive
side by side, and the drives side by side.

    charts   the data rate over busy time and the 99th percentile latency per trace and state,
             a bar per run; each trace's latency distribution (the share of its commands that
             completed within a time), a line per run and state
    tables   per trace: each run's empty and full figures, all commands, reads and writes
    findings per trace and run: the full drive against the empty one, and what fitting did
"""

from __future__ import annotations

from typing import Any

from ssdlab.catalogue.trace import STATES, trace_of
from ssdlab.model.results import Latency
from ssdlab.report.charts import Chart, grouped_bars, latency_distribution, slug
from ssdlab.report.data import TestGroup
from ssdlab.store import StepRecord

TABLE_HEADER = ("run", "drive", "MB/s", "IOPS", "mean µs", "p99 µs", "p99.99 µs", "max µs", "read mean µs",
                "read p99 µs", "write mean µs", "write p99 µs", "energy J", "mean W")


def is_trace(steps: list[StepRecord]) -> bool:
    return any(s.step.trace is not None for s in steps)


def _replays(group: TestGroup) -> list[tuple[str, str, dict[str, Any]]]:
    """(run label, trace, its score's figures by state) of every run's every trace."""
    return [(tr.run.label, replay["trace"], replay) for tr in group.runs
            if (score := tr.record.score) for replay in score.get("traces", ())]


def trace_charts(group: TestGroup, labels: list[str]) -> list[Chart]:
    replays = _replays(group)
    charts = []
    for key, title, axis in (("data_rate_mbps", "data rate over busy time", "data rate (MB/s)"),
                             ("p99", "99th percentile latency of every command", "latency (µs)")):
        rows = [{"run": run, "group": f"{trace}: {state} drive", "value": _figure(figures, key)}
                for run, trace, replay in replays for state in STATES if (figures := replay.get(state))]
        if rows:
            charts.append(grouped_bars(slug(group.id, "trace", key), f"{group.id}: {title}", rows, axis, labels))
    traces = dict.fromkeys(trace_of(s.step) for _, s in group.measured)
    for trace in traces:
        rows = [{"run": tr.run.label, "state": s.step.fill_state or "", **point}
                for tr, s in group.measured if trace_of(s.step) == trace
                for point in _distribution(Latency.merge(d.latency for d in s.result.directions.values()))]
        if rows:
            charts.append(latency_distribution(slug(group.id, "trace", trace, "latency"),
                                               f"{group.id} · {trace}: share of commands completed within a "
                                               "latency", rows, labels))
    return charts


def trace_tables(group: TestGroup) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """Per trace: (caption, header, rows), each run's empty and full replays."""
    by_trace: dict[str, list[tuple[str, ...]]] = {}
    for run, trace, replay in _replays(group):
        for state in STATES:
            if (figures := replay.get(state)) is not None:
                by_trace.setdefault(trace, []).append((run, state, *_row(figures)))
    return [(f"Trace {trace}: empty and full drive", TABLE_HEADER, rows) for trace, rows in by_trace.items()]


def trace_findings(group: TestGroup) -> list[str]:
    findings = []
    for run, trace, replay in _replays(group):
        empty, full = replay.get("empty"), replay.get("full")
        if empty and full and empty["data_rate_mbps"]:
            change = full["data_rate_mbps"] / empty["data_rate_mbps"] - 1
            findings.append(f"{run} · {trace}: {full['data_rate_mbps']:,.1f} MB/s full against "
                            f"{empty['data_rate_mbps']:,.1f} MB/s empty ({change:+.0%}); 99th percentile "
                            f"{full['latency_us']['all']['p99']:,.1f} µs full, "
                            f"{empty['latency_us']['all']['p99']:,.1f} µs empty")
    for tr in group.runs:
        for described in tr.record.test.settings.get("traces", ()):
            if described["notes"]:
                findings.append(f"{tr.run.label} · {described['title']} as replayed: {'; '.join(described['notes'])}")
    return findings


def _figure(figures: dict[str, Any], key: str) -> float:
    return figures["latency_us"]["all"][key] if key.startswith("p") else figures[key]


def _row(figures: dict[str, Any]) -> tuple[str, ...]:
    latency = figures["latency_us"]
    every, read, write = latency["all"], latency.get("read"), latency.get("write")

    def us(part: dict[str, float] | None, key: str) -> str:
        return "" if part is None else f"{part[key]:,.1f}"

    def known(value: float | None, form: str) -> str:
        return "" if value is None else format(value, form)

    return (f"{figures['data_rate_mbps']:,.1f}", f"{figures['iops']:,.0f}", us(every, "mean"), us(every, "p99"),
            us(every, "p99.99"), us(every, "max"), us(read, "mean"), us(read, "p99"), us(write, "mean"),
            us(write, "p99"), known(figures["energy_j"], ",.1f"), known(figures["mean_power_w"], ".2f"))


def _distribution(latency: Latency) -> list[dict[str, float]]:
    """The cumulative share (%) of commands within each histogram bin's latency (µs)."""
    done, points = 0, []
    for value, count in latency.histogram:
        done += count
        points.append({"latency_us": value / 1e3, "share": 100 * done / latency.count})
    return points
