"""One section per test: its charts and tables, chosen by the shape of what it measured.

A shape is recognised from the measured steps alone, not from the test id, so
tests added to the catalogue later render sensibly without a change here:

    fill      a per-GiB series        -> the fill curve, cache boundary and phases
    mix       several read shares     -> the mixed curve
    qd        several queue depths    -> QD-scaling lines
    bs        3+ block sizes (a sweep) -> throughput per block size, per pattern
    generic   anything else           -> a bar per measured step

The first registered shape that matches wins; `@shape(kind, matches)` registers
another. Every section also gets a bar chart of the primary score per run, a
table of throughput and latency percentiles per step, and the test's conditions;
and where telemetry was read, the temperature beside the throughput with the
throttle events marked, a table of those events, and the drive's health before
and after the test. A power test's score adds its own charts (power_sections.py) and
tables (power_tables.py), an endurance test's its figures against the data written
(endurance_sections.py), a trace test's its traces empty and full side by side
(trace_sections.py), a PTS test's header, convergence, window and matrices
(pts_sections.py). A run with more than FILL_CHARTS fills (an endurance test's probes) has
them in one chart only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ssdlab.analysis.fill import analyze_fill
from ssdlab.documents import HEALTH_HEADER, health_document, health_rows
from ssdlab.model import Phase, TestStatus
from ssdlab.model.results import DirectionResult
from ssdlab.power_tables import power_tables
from ssdlab.report.charts import (
    Chart,
    block_size_lines,
    fill_curve,
    grouped_bars,
    mix_curve,
    qd_scaling,
    slug,
    temperature_beside_throughput,
)
from ssdlab.report.data import ReportData, TestGroup
from ssdlab.report.endurance_sections import endurance_charts
from ssdlab.report.power_sections import power_charts
from ssdlab.report.pts_sections import pts_charts, pts_tables
from ssdlab.report.trace_sections import is_trace, trace_charts, trace_findings, trace_tables
from ssdlab.store import StepRecord
from ssdlab.units import KiB


@dataclass(frozen=True)
class Table:
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    test: str
    title: str
    kind: str
    findings: tuple[str, ...]
    charts: tuple[Chart, ...]
    tables: tuple[Table, ...]

    @property
    def id(self) -> str:
        return anchor(self.test)


def anchor(test_id: str) -> str:
    """The HTML id of a test's section."""
    return f"test-{slug(test_id)}"


@dataclass(frozen=True)
class ShapeView:
    charts: list[Chart]
    findings: list[str]


Matcher = Callable[[list[StepRecord]], bool]
Builder = Callable[[TestGroup, list[str]], ShapeView]
_SHAPES: list[tuple[str, Matcher, Builder]] = []


def shape(kind: str, matches: Matcher) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        _SHAPES.append((kind, matches, build))
        return build
    return register


def sections(data: ReportData) -> list[Section]:
    labels = [r.label for r in data.runs]
    return [_section(group, labels) for group in data.tests]


def _section(group: TestGroup, labels: list[str]) -> Section:
    steps = [s for _, s in group.measured]
    kind, build = next(((k, b) for k, m, b in _SHAPES if steps and m(steps)),
                       ("generic", _generic))
    skipped = [f"{tr.run.label} skipped it: {tr.record.error}" for tr in group.runs
               if tr.record.status is TestStatus.SKIPPED]
    view = build(group, labels) if steps else ShapeView([], [] if skipped else ["nothing was measured yet"])
    extra = [chart for chart in (_temperature_chart(group, labels), _score_bars(group, labels)) if chart]
    throttles = _throttle_table(group)
    return Section(test=group.id, title=f"{group.id}: {group.title}", kind=kind,
                   findings=(*skipped, *view.findings),
                   charts=tuple([*power_charts(group, labels), *endurance_charts(group, labels), *pts_charts(group),
                                 *view.charts, *extra]),
                   tables=(*_pts_tables(group), *_power_tables(group), *_trace_tables(group), _step_table(group),
                           *([throttles] if throttles else []),
                           *_health_tables(group), _conditions_table(group)))


def _pts_tables(group: TestGroup) -> list[Table]:
    return [Table(caption, header, tuple(rows)) for caption, header, rows in pts_tables(group)]


def _trace_tables(group: TestGroup) -> list[Table]:
    return [Table(caption, header, tuple(rows)) for caption, header, rows in trace_tables(group)]


def _power_tables(group: TestGroup) -> list[Table]:
    return [Table(f"{caption}: {tr.run.label}", header, tuple(rows)) for tr in group.runs
            for caption, header, rows in power_tables(group.id, tr.record.score)]


def distinct(steps: Sequence[StepRecord], key: Callable[[StepRecord], object]) -> int:
    return len({key(s) for s in steps} - {None})


FILL_CHARTS = 4


@shape("trace", is_trace)
def _trace(group: TestGroup, labels: list[str]) -> ShapeView:
    """Traces replayed (before the other shapes: their steps' read shares are not a mix sweep)."""
    return ShapeView(trace_charts(group, labels), trace_findings(group))


@shape("fill", lambda steps: any(s.result.per_gib for s in steps))
def _fill(group: TestGroup, labels: list[str]) -> ShapeView:
    """A chart per fill, and all of them in one when there are several: the runs compared, or a
    run's own fills (slc-retirement's young and aged), each curve then named by run and step."""
    runs = [(tr, s) for tr, s in group.measured if s.result.per_gib]
    several = len({tr.run.run.id for tr, _ in runs}) < len(runs)  # fills in one run
    each = len(runs) <= FILL_CHARTS
    series = [f"{tr.run.label} · {s.step.label}" if several else tr.run.label for tr, s in runs]
    charts, findings, cache_ends, curves = [], [], [], []
    for (tr, s), name in zip(runs, series, strict=True):
        analysis = analyze_fill(s.result.per_gib)
        rows = [{"run": name, "gib": p.gib, "mbps": p.mbps} for p in s.result.per_gib]
        cache_end = ([{"run": name, "gib": analysis.slc_cache_gib}]
                     if analysis.slc_cache_gib is not None else [])
        phases = [{"kind": p.kind, "start_gib": p.start_gib, "end_gib": p.end_gib,
                   "mean_mbps": round(p.mean_mbps, 1)} for p in analysis.phases]
        findings.append(f"{name}: {analysis.finding}")
        if each:
            chart = slug(group.id, "fill-curve", f"run-{tr.run.run.id}", f"step-{s.idx}")
            charts.append(fill_curve(chart, f"{group.id} · {name}: MB/s per GiB written",
                                     rows, cache_end, phases, series if several else labels))
        cache_ends += cache_end
        curves += rows
    if len(runs) > 1:
        compared = "runs compared" if len(group.runs) > 1 else "fills compared"
        charts.insert(0, fill_curve(slug(group.id, "fill-curve-compared"),
                                    f"{group.id}: MB/s per GiB written, {compared}",
                                    curves, cache_ends, [], series if several else labels))
    return ShapeView(charts, findings)


@shape("mix", lambda steps: distinct(steps, lambda s: s.step.rwmixread) > 1)
def _mix(group: TestGroup, labels: list[str]) -> ShapeView:
    rows = [{"run": tr.run.label, "read_share": s.step.rwmixread, "mbps": round(s.result.mbps, 2)}
            for tr, s in group.measured if s.step.rwmixread is not None]
    return ShapeView([mix_curve(slug(group.id, "mixed-curve"),
                                f"{group.id}: MB/s per read share", rows, labels)], [])


@shape("qd", lambda steps: distinct(steps, lambda s: s.step.iodepth) > 1
       and distinct(steps, lambda s: (s.step.rw, s.step.bs)) == 1)
def _queue_depths(group: TestGroup, labels: list[str]) -> ShapeView:
    rows = [{"run": tr.run.label, "qd": s.step.iodepth, "mbps": round(s.result.mbps, 2)}
            for tr, s in group.measured]
    return ShapeView([qd_scaling(slug(group.id, "qd-scaling"),
                                 f"{group.id}: MB/s per queue depth", rows, labels)], [])


# Two block sizes are a couple of cases (4 KiB and 512 B latency), not a sweep.
@shape("bs", lambda steps: distinct(steps, lambda s: s.step.bs) >= 3)
def _block_sizes(group: TestGroup, labels: list[str]) -> ShapeView:
    rows = [{"run": tr.run.label, "pattern": f"{s.step.rw.value} QD{s.step.iodepth}",
             "kib": s.step.bs / KiB, "mbps": round(s.result.mbps, 2)}
            for tr, s in group.measured]
    return ShapeView([block_size_lines(slug(group.id, "block-sizes"),
                                       f"{group.id}: MB/s per block size", rows, labels)], [])


def _generic(group: TestGroup, labels: list[str]) -> ShapeView:
    """A bar per measured step: MB/s, or IOPS when no step moved data (TRIM). A test
    of one step (a burst) has its bar in the primary-score chart already."""
    if all(len(tr.measured) <= 1 for tr in group.runs):
        return ShapeView([], [])
    moved = any(s.result.bytes for _, s in group.measured)
    rows = [{"run": tr.run.label, "group": step_name(s),
             "value": round(s.result.mbps if moved else s.result.iops, 2)}
            for tr, s in group.measured]
    axis = "throughput (MB/s)" if moved else "I/O rate (IOPS)"
    return ShapeView([grouped_bars(slug(group.id, "steps"), f"{group.id}: every measured step",
                                   rows, axis, labels)], [])


def step_name(record: StepRecord) -> str:
    state = record.step.fill_state
    return record.step.label + (f" [{state}]" if state and state not in record.step.label else "")


def _score_bars(group: TestGroup, labels: list[str]) -> Chart | None:
    scored = [(tr, tr.record.score) for tr in group.runs
              if tr.record.score and tr.record.score.get("value") is not None]
    if not scored:
        return None
    first = scored[0][1]
    rows = [{"run": tr.run.label, "group": group.id, "value": score["value"]}
            for tr, score in scored]
    return grouped_bars(slug(group.id, "primary-score"), f"{group.id}: primary score", rows,
                        f"{first['name']} ({first['unit']})", labels)


def _temperature_chart(group: TestGroup, labels: list[str]) -> Chart | None:
    """Every step of the test that has a temperature series, end to end in busy time."""
    throughput, temperatures, events, starts = [], [], [], []
    for tr in group.runs:
        offset = 0.0
        for s in tr.steps:
            if s.telemetry.temperature is None:
                continue
            tag = {"run": tr.run.label, "step": step_name(s)}
            starts.append({**tag, "t_s": offset})
            measured = s.step.phase is Phase.MEASURE
            throughput += [{**tag, "t_s": offset + p.t_s, "mbps": p.mbps, "measured": measured}
                           for p in s.result.per_second]
            # second k is [k, k+1); like a throughput point, drawn at its end
            temperatures += [{**tag, "t_s": offset + k + 1, "celsius": c}
                             for k, c in enumerate(s.telemetry.temperature.celsius) if c is not None]
            events += [{**tag, "start_s": offset + e.start_s, "end_s": offset + e.start_s + e.length_s,
                        "threshold": e.threshold} for e in s.throttles]
            offset += s.result.busy_s
    if not temperatures:
        return None
    # the throughput axis fits the measured steps: a preconditioning write many times faster
    # would flatten them to a line at zero (it is drawn up to the top, and cut there)
    measured = [r["mbps"] for r in throughput if r.pop("measured")]
    top = max(measured) * 1.1 if measured and max(measured) > 0 else None
    return temperature_beside_throughput(slug(group.id, "temperature"),
                                         f"{group.id}: throughput and temperature, throttle events shaded",
                                         throughput, temperatures, events, starts, labels, mbps_top=top)


THROTTLE_HEADER = ("run", "step", "start (s)", "length (s)", "MB/s before", "MB/s during", "°C at start",
                   "peak °C", "threshold")


def _throttle_table(group: TestGroup) -> Table | None:
    rows = tuple((tr.run.label, step_name(s), str(e.start_s), str(e.length_s), f"{e.mbps_before:,.1f}",
                  f"{e.mbps_during:,.1f}", *("" if c is None else f"{c:.1f}"
                                              for c in (e.start_temperature_c, e.peak_temperature_c)),
                  e.threshold)
                 for tr in group.runs for s in tr.steps for e in s.throttles)
    return Table("Throttle events (seconds of the step's busy time)", THROTTLE_HEADER, rows) if rows else None


def _health_tables(group: TestGroup) -> list[Table]:
    return [Table(f"Drive health before and after the test: {tr.run.label}", HEALTH_HEADER, tuple(rows))
            for tr in group.runs if tr.record.health and (rows := health_rows(health_document(tr.record.health)))]


LATENCY_HEADER = ("run", "step", "started (UTC)", "dir", "IOPS", "MB/s", "mean µs", "p50 µs",
                  "p99 µs", "p99.9 µs", "p99.99 µs", "max µs")
EFFICIENCY_HEADER = ("W", "MB/s per W", "kIOPS per W")


def _step_table(group: TestGroup) -> Table:
    """Throughput and latency percentiles of every measured step and direction; the
    efficiency columns only when some step knows its energy."""
    energy = any(s.result.energy_j is not None for _, s in group.measured)
    rows = []
    for tr, s in group.measured:
        for direction, d in s.result.directions.items():
            row = (tr.run.label, step_name(s), _clock(s.result.started_at), direction,
                   f"{d.iops:,.0f}", f"{d.mbps:,.1f}", *_latencies_us(d))
            if energy:
                row += _efficiency(s)
            rows.append(row)
    header = LATENCY_HEADER + (EFFICIENCY_HEADER if energy else ())
    return Table("Throughput and completion latency per step", header, tuple(rows))


def _latencies_us(d: DirectionResult) -> tuple[str, ...]:
    lat = d.latency
    return tuple(f"{ns / 1e3:,.1f}" for ns in (lat.mean_ns, lat.p50_ns, lat.p99_ns, lat.p99_9_ns,
                                              lat.p99_99_ns, lat.max_ns))


def _efficiency(s: StepRecord) -> tuple[str, ...]:
    r = s.result
    if r.energy_j is None:
        return ("", "", "")
    return (f"{r.watts:.2f}", f"{r.mbps_per_w:,.1f}", f"{r.kiops_per_w:,.2f}")


def _clock(iso: str | None) -> str:
    """'2026-11-22T17:18:53.769+00:00' -> '2026-11-22 17:18:53'."""
    return iso[:19].replace("T", " ") if iso else ""


def _conditions_table(group: TestGroup) -> Table:
    rows = tuple((tr.run.label, tr.record.status.value, _clock(tr.record.started_at),
                  _clock(tr.record.finished_at), tr.before, tr.record.error or "")
                 for tr in group.runs)
    return Table("Conditions", ("run", "status", "started (UTC)", "finished (UTC)",
                                "drive state before (steps in order)", "error"), rows)
