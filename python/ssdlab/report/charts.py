"""The charts of a report, as Vega-Lite specs built with altair.

Every builder takes plain rows (dicts) and the run labels in report order, so a
run keeps its colour in every chart, and returns a `Chart`; a sweep's chart
(score_against_key) has a point per variant instead. Every axis names its
unit: MB/s is 10^6 bytes/s, GiB written, µs latency, QD, read share %.

The rows go into the spec's top-level `datasets` after altair has validated the
chart: validating thousands of fill points against the schema would cost seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

WIDTH = 640
HEIGHT = 320
MBPS_AXIS = "throughput (MB/s)"
POINT_PADDING = 12  # px inside the axes: a point at the end of a scale is drawn whole
PHASE_COLOURS = {"cache": "#4c9f70", "native": "#e0a030", "folding": "#c0504d"}
Rows = Sequence[dict[str, Any]]


@dataclass(frozen=True)
class Chart:
    """`name` is a slug that says what the chart is: its file name and its element id."""

    name: str
    title: str
    spec: dict[str, Any]

    @property
    def element_id(self) -> str:
        return f"chart-{self.name}"


def slug(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _chart(name: str, title: str, chart: alt.TopLevelMixin, **datasets: Rows) -> Chart:
    spec = chart.properties(title=title).to_dict()
    spec["datasets"] = {key: list(rows) for key, rows in datasets.items()}
    return Chart(name, title, spec)


def _base(dataset: str) -> alt.Chart:
    return alt.Chart(alt.Data(name=dataset)).properties(width=WIDTH, height=HEIGHT)


def _by_run(channel: type[alt.Color] | type[alt.Stroke],
            labels: Sequence[str]) -> alt.Color | alt.Stroke:
    """Runs on a colour channel whose domain is every run, so colours match across charts."""
    return channel("run:N", scale=alt.Scale(domain=list(labels)), title="run",
                   legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=600))


def qd_scaling(name: str, title: str, rows: Rows, labels: Sequence[str]) -> Chart:
    """Rows: run, qd, mbps. Queue depths double, so the QD axis is log 2."""
    qds = sorted({r["qd"] for r in rows})
    chart = _base("rows").mark_line(point=True).encode(
        x=alt.X("qd:Q", title="queue depth (QD)",
                scale=alt.Scale(type="log", base=2, domain=[qds[0], qds[-1]]),
                axis=alt.Axis(values=qds, format="d")),
        y=alt.Y("mbps:Q", title=MBPS_AXIS), color=_by_run(alt.Color, labels),
        tooltip=["run:N", "qd:Q", alt.Tooltip("mbps:Q", format=".1f")])
    return _chart(name, title, chart, rows=rows)


def mix_curve(name: str, title: str, rows: Rows, labels: Sequence[str]) -> Chart:
    """Rows: run, read_share, mbps. Reviews draw the sweep from 100 % reads to 0 %."""
    chart = _base("rows").mark_line(point=True).encode(
        x=alt.X("read_share:Q", title="read share (%)", scale=alt.Scale(domain=[100, 0])),
        y=alt.Y("mbps:Q", title=MBPS_AXIS), color=_by_run(alt.Color, labels),
        tooltip=["run:N", "read_share:Q", alt.Tooltip("mbps:Q", format=".1f")])
    return _chart(name, title, chart, rows=rows)


def fill_curve(name: str, title: str, rows: Rows, cache_ends: Rows, phases: Rows,
               labels: Sequence[str]) -> Chart:
    """Rows: run, gib, mbps. Each run's estimated SLC cache end is a dashed rule
    (cache_ends: run, gib); phases (kind, start_gib, end_gib) are shaded, which
    only reads well for one run, so callers pass them for single-run charts. The
    colour channel shades the phases; runs are told apart by the line's stroke."""
    x = alt.X("gib:Q", title="data written (GiB)")
    layers = []
    if phases:
        layers.append(_base("phases").mark_rect(opacity=0.15).encode(
            x=alt.X("start_gib:Q", title="data written (GiB)"), x2="end_gib:Q",
            color=alt.Color("kind:N", title="phase",
                            scale=alt.Scale(domain=list(PHASE_COLOURS),
                                            range=list(PHASE_COLOURS.values())),
                            legend=alt.Legend(orient="bottom")),
            tooltip=["kind:N", alt.Tooltip("start_gib:Q", format=".2f"),
                     alt.Tooltip("end_gib:Q", format=".2f"),
                     alt.Tooltip("mean_mbps:Q", format=".1f")]))
    layers.append(_base("rows").mark_line(strokeWidth=1.2).encode(
        x=x, y=alt.Y("mbps:Q", title=MBPS_AXIS), stroke=_by_run(alt.Stroke, labels),
        tooltip=["run:N", alt.Tooltip("gib:Q", format=".2f"), alt.Tooltip("mbps:Q", format=".1f")]))
    if cache_ends:
        layers.append(_base("cache_ends").mark_rule(strokeDash=[6, 4], strokeWidth=2).encode(
            x=x, stroke=_by_run(alt.Stroke, labels),
            tooltip=["run:N", alt.Tooltip("gib:Q", title="SLC cache (GiB)", format=".2f")]))
    chart = alt.layer(*layers).resolve_scale(color="independent")
    return _chart(name, title, chart, rows=rows, phases=phases, cache_ends=cache_ends)


def against_written(name: str, title: str, rows: Rows, axis_title: str, labels: Sequence[str]) -> Chart:
    """Rows: run, figure, tb, value; a line per run and figure (the dash tells the figures
    apart), TB the host wrote on the x axis: how a drive changes as it wears."""
    chart = _base("rows").mark_line(point=True).encode(
        x=alt.X("tb:Q", title="data written by the host (TB)"), y=alt.Y("value:Q", title=axis_title),
        color=_by_run(alt.Color, labels), strokeDash=alt.StrokeDash("figure:N", title=None,
                                                                    legend=alt.Legend(orient="bottom")),
        tooltip=["run:N", "figure:N", alt.Tooltip("tb:Q", format=",.3f"), alt.Tooltip("value:Q", format=",.2f")])
    return _chart(name, title, chart, rows=rows)


def block_size_lines(name: str, title: str, rows: Rows, labels: Sequence[str]) -> Chart:
    """Rows: run, pattern, kib, mbps; one panel per pattern, block size on a log 2 axis."""
    sizes = sorted({r["kib"] for r in rows})
    chart = alt.Chart(alt.Data(name="rows")).mark_line(point=True).encode(
        x=alt.X("kib:Q", title="block size (KiB)", scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(values=sizes)),
        y=alt.Y("mbps:Q", title=MBPS_AXIS), color=_by_run(alt.Color, labels),
        tooltip=["run:N", "pattern:N", "kib:Q", alt.Tooltip("mbps:Q", format=".1f")],
    ).properties(width=WIDTH // 2 - 20, height=HEIGHT * 2 // 3).facet(
        facet=alt.Facet("pattern:N", title=None), columns=2)
    return _chart(name, title, chart, rows=rows)


def grouped_bars(name: str, title: str, rows: Rows, axis_title: str,
                 labels: Sequence[str]) -> Chart:
    """Rows: run, group, value. One bar per run in each group, side by side."""
    groups = list(dict.fromkeys(r["group"] for r in rows))
    chart = _base("rows").mark_bar().encode(
        y=alt.Y("group:N", title=None, sort=groups, axis=alt.Axis(labelLimit=300)),
        yOffset=alt.YOffset("run:N", sort=list(labels)),
        x=alt.X("value:Q", title=axis_title), color=_by_run(alt.Color, labels),
        tooltip=["run:N", "group:N", alt.Tooltip("value:Q", format=",.2f")],
    ).properties(height=alt.Step(max(8, 24 // max(1, len(labels)))))
    return _chart(name, title, chart, rows=rows)


def time_series(name: str, title: str, rows: Rows, axis_title: str, panel: str,
                labels: Sequence[str]) -> Chart:
    """Rows: run, `panel`, t_s, value; one panel per value of `panel` (a fill state),
    seconds into the step on the x axis: how steady the drive stays."""
    panels = list(dict.fromkeys(r[panel] for r in rows))
    chart = alt.Chart(alt.Data(name="rows")).mark_line(strokeWidth=1.2).encode(
        x=alt.X("t_s:Q", title="time into the step (s)"),
        y=alt.Y("value:Q", title=axis_title), color=_by_run(alt.Color, labels),
        tooltip=["run:N", f"{panel}:N", alt.Tooltip("t_s:Q", format=".1f"),
                 alt.Tooltip("value:Q", format=",.2f")],
    ).properties(width=WIDTH // 2 - 20, height=HEIGHT * 2 // 3).facet(
        facet=alt.Facet(f"{panel}:N", title=None, sort=panels), columns=2)
    return _chart(name, title, chart, rows=rows)


def temperature_beside_throughput(name: str, title: str, throughput: Rows, temperatures: Rows, events: Rows,
                                  step_starts: Rows, labels: Sequence[str], mbps_top: float | None = None) -> Chart:
    """Throughput (run, step, t_s, mbps) above temperature (run, step, t_s, celsius) on one
    time axis, the test's steps end to end in busy time; throttle events (run, step,
    start_s, end_s, threshold) shaded on both, and where each step starts (run, step, t_s)
    ruled and named on the throughput when a run has several (the names are text in the
    chart, so an exported image keeps them). `mbps_top`: the throughput axis ends there,
    faster points cut at it."""
    time_axis = "busy time into the test (s)"
    x = alt.X("t_s:Q", title=time_axis)

    def base(dataset: str) -> alt.Chart:
        return alt.Chart(alt.Data(name=dataset)).properties(width=WIDTH, height=HEIGHT // 2)

    def panel(dataset: str, field: str, axis: alt.Y, *extra: alt.Chart) -> alt.LayerChart:
        layers = [base("events").mark_rect(opacity=0.2, color="#c0504d").encode(
            x=alt.X("start_s:Q", title=time_axis), x2="end_s:Q",
            tooltip=["run:N", "step:N", "threshold:N", alt.Tooltip("start_s:Q", format=".0f"),
                     alt.Tooltip("end_s:Q", format=".0f")])] if events else []
        layers.append(base(dataset).mark_line(strokeWidth=1.2, clip=True).encode(
            x=x, y=axis, color=_by_run(alt.Color, labels),
            tooltip=["run:N", "step:N", alt.Tooltip("t_s:Q", format=".0f"), alt.Tooltip(f"{field}:Q", format=".1f")]))
        return alt.layer(*layers, *extra)

    several = len(step_starts) > len({r["run"] for r in step_starts})
    starts = [base("step_starts").mark_rule(color="#999", strokeDash=[2, 3]).encode(x=x, tooltip=["run:N", "step:N"]),
              base("step_starts").mark_text(align="left", baseline="top", dx=2, dy=2, fontSize=9, angle=0,
                                            color="#555").encode(x=x, y=alt.value(0), text="step:N")]
    mbps = alt.Y("mbps:Q", title=MBPS_AXIS,
                 scale=alt.Scale(domain=[0, mbps_top]) if mbps_top else alt.Undefined)
    chart = alt.vconcat(panel("throughput", "mbps", mbps, *(starts if several else [])),
                        panel("temperatures", "celsius", alt.Y("celsius:Q", title="temperature (°C)",
                                                               scale=alt.Scale(zero=False)))
                        ).resolve_scale(x="shared")
    return _chart(name, title, chart, throughput=throughput, temperatures=temperatures, events=events,
                  step_starts=step_starts)


def wake_latency(name: str, title: str, rows: Rows, labels: Sequence[str]) -> Chart:
    """Rows: run, policy, idle_s, wake_us, max_wake_us, power_state (text, empty when not
    known). Idle lengths run from 0.01 to 30 s: a log axis. Wake-up latency runs from µs to ms
    and may fall below 0 (a first read faster than the warm median): a symlog axis. The line
    joins the medians of the repetitions, the rule above each point reaches their maximum;
    runs by colour, policies by dash."""
    idles = sorted({r["idle_s"] for r in rows})
    policies = list(dict.fromkeys(r["policy"] for r in rows))  # the host's first: a solid line
    x = alt.X("idle_s:Q", title="idle before the read (s)",
              scale=alt.Scale(type="log", domain=[idles[0], idles[-1]]), axis=alt.Axis(values=idles))
    decades = _decades(min(r["wake_us"] for r in rows), max(r["max_wake_us"] for r in rows))
    y = alt.Y("wake_us:Q", title="wake-up latency, first read minus warm read (µs)",
              scale=alt.Scale(type="symlog", domain=[decades[0], decades[-1]]),
              axis=alt.Axis(values=decades, format=",.0f"))
    tooltip = ["run:N", "policy:N", alt.Tooltip("idle_s:Q", title="idle (s)"),
               alt.Tooltip("wake_us:Q", title="median (µs)", format=",.1f"),
               alt.Tooltip("max_wake_us:Q", title="max (µs)", format=",.1f"), "power_state:N"]
    colour = _by_run(alt.Color, labels)
    spread = _base("rows").mark_rule(opacity=0.6).encode(x=x, y=y, y2="max_wake_us:Q", color=colour, tooltip=tooltip)
    # the points in a layer of their own: on the line, they would stand for the dashes in the legend
    medians = _base("rows").mark_line().encode(
        x=x, y=y, color=colour, strokeDash=alt.StrokeDash("policy:N", title="policy", sort=policies,
                                                          legend=alt.Legend(orient="bottom", symbolType="stroke")))
    points = _base("rows").mark_point(filled=True).encode(x=x, y=y, color=colour, tooltip=tooltip)
    return _chart(name, title, alt.layer(spread, medians, points), rows=rows)


def latency_distribution(name: str, title: str, rows: Rows, labels: Sequence[str]) -> Chart:
    """Rows: run, state, latency_us, share (%); the share of commands completed within each
    latency, a line per run (colour) and drive state (dash), latency on a log axis: the tail
    where the lines reach 100 %."""
    chart = _base("rows").mark_line(interpolate="step-after").encode(
        x=alt.X("latency_us:Q", title="completion latency (µs)", scale=alt.Scale(type="log")),
        y=alt.Y("share:Q", title="commands completed within it (%)", scale=alt.Scale(domain=[0, 100])),
        color=_by_run(alt.Color, labels),
        strokeDash=alt.StrokeDash("state:N", title="drive", legend=alt.Legend(orient="bottom")),
        tooltip=["run:N", "state:N", alt.Tooltip("latency_us:Q", format=",.1f"), alt.Tooltip("share:Q", format=".3f")])
    return _chart(name, title, chart, rows=rows)


def _decades(low: float, high: float) -> list[float]:
    """Ticks of a symlog axis from `low` to `high`: 0 and the powers of ten each side of it
    (Vega's own leave the decades near 0 bare)."""
    def powers(limit: float) -> list[float]:
        return [10.0 ** k for k in range(math.ceil(math.log10(max(limit, 1.0))) + 1)]
    below = powers(-low) if low < 0 else []
    return [*(-t for t in reversed(below)), 0.0, *powers(high)]


def score_against_key(name: str, title: str, rows: Rows, key: str, score_axis: str,
                      categories: Sequence[str] | None = None, whole: bool = False, colour: str | None = None,
                      colour_numeric: bool = False, lines: bool = True) -> Chart:
    """A sweep's score against one swept key. Rows: variant, run, value (the key's), score, and
    series (the other keys' values) with a `colour` title. The key's values are numbers, on a
    numeric axis (`whole`: integers, ticked at whole numbers), unless `categories` orders them
    as text. With `lines`, a line per series, its points marked; else points only (random
    samples share no other keys' values). A numeric series is a gradient; text ones keep the
    rows' order."""
    if categories is None:
        x = alt.X("value:Q", title=key, scale=alt.Scale(zero=False, padding=POINT_PADDING),
                  axis=alt.Axis(tickMinStep=1, format="d") if whole else alt.Undefined)
    else:
        x = alt.X("value:N", title=key, sort=list(categories), axis=alt.Axis(labelAngle=0))
    tooltip = [alt.Tooltip("variant:N", title="variant"), alt.Tooltip("run:N", title="run"),
               alt.Tooltip("value:Q" if categories is None else "value:N", title=key),
               alt.Tooltip("score:Q", title=score_axis, format=",.2f")]
    encoding: dict[str, Any] = {"x": x, "y": alt.Y("score:Q", title=score_axis,
                                                    scale=alt.Scale(zero=False, padding=POINT_PADDING)),
                                "tooltip": tooltip}
    if colour is not None:
        encoding["color"] = (
            alt.Color("series:Q", title=colour, scale=alt.Scale(scheme="darkmulti"), legend=alt.Legend(orient="right"))
            if colour_numeric else
            alt.Color("series:N", title=colour, scale=alt.Scale(domain=list(dict.fromkeys(r["series"] for r in rows))),
                      legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=600)))
        tooltip.insert(3, alt.Tooltip("series:Q" if colour_numeric else "series:N", title=colour))
    mark = (_base("rows").mark_line(point=alt.OverlayMarkDef(filled=True, size=60)) if lines
            else _base("rows").mark_point(filled=True, size=60))
    return _chart(name, title, mark.encode(**encoding), rows=rows)
