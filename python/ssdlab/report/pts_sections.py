"""The pages a SNIA PTS reader expects (catalogue/pts.py), from a PTS test's score:

    header       device, host, variant, active range, write cache asked, threads x QD, purge,
                 preconditioning, rounds and steady state, scale (a table per run)
    convergence  each loop's write cells (else its tracked ones) round by round
    window       the tracked figure over the measurement window, its mean, the 20 % band
                 (mean +-10 %), and the least-squares line whose change is the slope excursion
    matrix       the measurement window's means: a table per loop, the IOPS test's block
                 sizes by read shares also as a heat map
    curves       write saturation's IOPS against time and data written; cross stimulus
                 recovery's MB/s per minute; host idle recovery's bursts; demand intensity's
                 IOPS against mean response time, a line per thread count
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt

from ssdlab.analysis.pts_scores import MATRIX_HEADER, matrix_rows, steadiness
from ssdlab.model import Phase
from ssdlab.report.charts import HEIGHT, WIDTH, Chart, _chart, slug
from ssdlab.report.data import TestGroup, TestRun


def is_pts(run: TestRun) -> bool:
    settings = run.record.test.settings
    return "variant" in settings and run.record.score is not None


def header_table(run: TestRun) -> tuple[str, tuple[str, ...], list[tuple[str, ...]]]:
    """What a PTS report's header says, from the run and the test's settings and steps."""
    settings, score = run.record.test.settings, run.record.score or {}
    purge = next((s for s in run.steps if s.step.phase is Phase.PURGE), None)
    wipc = [s.step.label for s in run.steps if s.step.phase is Phase.PRECONDITION]
    loops = [f"{lp['name']}: {steadiness(lp['steady'])}" for lp in score.get("loops", [])]
    rows = [("device", run.run.run.target), ("engine", ", ".join(f"{k}={v}" for k, v in run.run.engine.items())),
            ("variant", str(settings.get("variant"))),
            ("active range", f"{settings.get('active_range_pct')} % of the LBAs, from the first"),
            ("volatile write cache", _write_cache(settings, score)),
            ("threads x queue depth", f"{settings.get('threads')} x {settings.get('queue_depth')}"),
            ("purge", "; ".join(purge.commands) if purge and purge.commands else "the backend's own purge"),
            ("preconditioning", "; ".join(dict.fromkeys(wipc)) or "none (from the purge)"),
            ("rounds", "; ".join(loops) or "no rounds"),
            ("scale", f"{settings.get('scale')}" + ("" if settings.get("conformant") else
                                                    " (shortened: not PTS-conformant)"))]
    return f"PTS header: {run.run.label}", ("item", "value"), rows


def _write_cache(settings: dict[str, Any], score: dict[str, Any]) -> str:
    """The cache the variant asked for, and whether it was set (the score says how)."""
    done = score.get("write_cache")
    return f"{settings.get('write_cache')} asked" + (f"; {done['how']}" if done else "")


def pts_tables(group: TestGroup) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    tables = []
    for run in (tr for tr in group.runs if is_pts(tr)):
        tables.append(header_table(run))
        rows = matrix_rows(run.run.run.id, group.id, run.record.score or {})
        if rows:
            tables.append((f"Measurement window means: {run.run.label}", MATRIX_HEADER,
                           [tuple(_shown(v) for v in row) for row in rows]))
    return tables


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return "" if value is None else str(value)


def pts_charts(group: TestGroup) -> list[Chart]:
    """Each run's PTS charts (a run's own: the PTS pages are one drive's)."""
    charts: list[Chart] = []
    for run in (tr for tr in group.runs if is_pts(tr)):
        score = run.record.score or {}
        tag = f"run-{run.run.run.id}"
        for k, loop in enumerate(score.get("loops", [])):
            charts.append(_convergence(slug(group.id, "convergence", tag, str(k)),
                                       f"{group.id} · {run.run.label}: {loop['name']}, steady-state convergence",
                                       loop))
            for cell, tracked in loop["tracked"].items():
                if tracked["window"] is not None:
                    charts.append(_window(slug(group.id, "window", tag, str(k), cell),
                                          f"{group.id} · {run.run.label}: {cell}, measurement window",
                                          cell, loop["figure"], tracked))
            if loop["name"] == "IOPS":
                charts.append(_heat_map(slug(group.id, "matrix", tag), f"{group.id} · {run.run.label}: "
                                        "IOPS by block size and read share (measurement window)", loop))
            if loop["name"] == "demand intensity":
                charts.append(_demand(slug(group.id, "demand-intensity", tag),
                                      f"{group.id} · {run.run.label}: IOPS against mean response time", loop))
        charts += _curves(group, run, tag)
    return charts


def _convergence(name: str, title: str, loop: dict[str, Any]) -> Chart:
    writes = [c for c in loop["cells"] if c.endswith("0/100")] or list(loop["tracked"])
    rows = [{"cell": cell, "round": r, "value": row[cell]}
            for r, row in enumerate(loop["rounds"], start=1) for cell in writes]
    chart = alt.Chart(alt.Data(name="rows")).properties(width=WIDTH, height=HEIGHT).mark_line(point=True).encode(
        x=alt.X("round:Q", title="round", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("value:Q", title=loop["figure"]), color=alt.Color("cell:N", title="cell", sort=writes),
        tooltip=["cell:N", "round:Q", alt.Tooltip("value:Q", format=",.1f")])
    return _chart(name, title, chart, rows=rows)


def _window(name: str, title: str, cell: str, figure: str, tracked: dict[str, Any]) -> Chart:
    w = tracked["window"]
    first, last, mean, slope = w["first_round"], w["last_round"], w["mean"], w["slope"]
    middle = (first + last) / 2
    points = [{"round": r, "value": v} for r, v in enumerate(tracked["series"], start=1)]
    levels = [{"what": what, "value": value} for what, value in (
        ("window mean", mean), ("mean +10 % (data excursion limit)", 1.1 * mean),
        ("mean -10 % (data excursion limit)", 0.9 * mean))]
    fit = [{"round": r, "fit": mean + slope * (r - middle)} for r in (first, last)]
    base = alt.Chart().properties(width=WIDTH, height=HEIGHT)
    x = alt.X("round:Q", title="round", axis=alt.Axis(tickMinStep=1))
    layers = [base.mark_rect(opacity=0.08, color="#4c9f70").encode(x=alt.datum(first), x2=alt.datum(last)),
              base.mark_line(point=True, color="#333").encode(
                  x=x, y=alt.Y("value:Q", title=f"{cell} ({figure})"),
                  tooltip=["round:Q", alt.Tooltip("value:Q", format=",.1f")]).properties(data=alt.Data(name="points")),
              base.mark_rule(strokeDash=[4, 3]).encode(
                  y="value:Q", color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom")),
                  tooltip=["what:N", alt.Tooltip("value:Q", format=",.1f")]).properties(data=alt.Data(name="levels")),
              base.mark_line(color="#c0504d", strokeWidth=2).encode(
                  x="round:Q", y="fit:Q", tooltip=[alt.Tooltip("fit:Q", format=",.1f")]
              ).properties(data=alt.Data(name="fit"))]
    excursion = f"slope excursion {w['slope_excursion']:,.1f}, data excursion {w['data_excursion']:,.1f}"
    return _chart(name, f"{title} ({excursion})", alt.layer(*layers), points=points, levels=levels, fit=fit)


def _heat_map(name: str, title: str, loop: dict[str, Any]) -> Chart:
    rows = []
    for cell, value in loop["window_means"].items():
        _, number, unit, mix = cell.split(" ")  # "RND 4 KiB 65/35"
        rows.append({"block size": f"{number} {unit}", "read/write": mix, "IOPS": value})
    sizes = list(dict.fromkeys(r["block size"] for r in rows))[::-1]  # small blocks on top
    mixes = list(dict.fromkeys(r["read/write"] for r in rows))[::-1]  # writes on the left
    base = alt.Chart(alt.Data(name="rows")).properties(width=WIDTH, height=HEIGHT).encode(
        x=alt.X("read/write:N", sort=mixes, title="read/write mix (%)"),
        y=alt.Y("block size:N", sort=sizes, title="block size"))
    cells = base.mark_rect().encode(color=alt.Color("IOPS:Q", scale=alt.Scale(type="log"), title="IOPS"),
                                    tooltip=["block size:N", "read/write:N", alt.Tooltip("IOPS:Q", format=",.0f")])
    # light text on the darker half of the log colour scale
    values = [r["IOPS"] for r in rows if r["IOPS"] > 0]
    middle = math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text("IOPS:Q", format=",.0f"),
        color=alt.condition(alt.datum.IOPS > middle, alt.value("white"), alt.value("black")))
    return _chart(name, title, alt.layer(cells, text), rows=rows)


def _demand(name: str, title: str, loop: dict[str, Any]) -> Chart:
    rows = []
    for cell in loop["cells"]:
        threads, depth = (int(part[2:]) for part in cell.split(" ")[-2:])
        mean = loop["window_means"].get(cell)
        latency = loop["window_means"].get(f"{cell} mean µs")
        if mean is not None and latency is not None:
            rows.append({"threads": f"TC{threads}", "qd": depth, "IOPS": mean, "mean_us": latency})
    chart = alt.Chart(alt.Data(name="rows")).properties(width=WIDTH, height=HEIGHT).mark_line(point=True).encode(
        x=alt.X("IOPS:Q", title="IOPS"), y=alt.Y("mean_us:Q", title="mean response time (µs)"),
        color=alt.Color("threads:N", title="threads"), order="qd:Q",
        tooltip=["threads:N", "qd:Q", alt.Tooltip("IOPS:Q", format=",.0f"), alt.Tooltip("mean_us:Q", format=",.1f")])
    return _chart(name, title, chart, rows=rows)


def _curves(group: TestGroup, run: TestRun, tag: str) -> list[Chart]:
    """A run's long-step curves, its own series in each chart."""
    score = run.record.score or {}
    lines = []
    if "points" in score:  # write saturation
        rows = [{"run": run.run.label, **p} for p in score["points"]]
        lines += [("time", "t_s:Q", "time (s)", "iops:Q", "IOPS", rows),
                  ("written", "written_gb:Q", "data written (GB)", "iops:Q", "IOPS", rows)]
    if "accesses" in score:  # cross stimulus recovery
        rows = [{"run": f"{run.run.label} · {a['label']}", **p} for a in score["accesses"] for p in a["points"]]
        lines.append(("accesses", "t_s:Q", "time in the access (s)", "mbps:Q", "MB/s", rows))
    if "wait_states" in score:  # host idle recovery
        rows = [{"run": f"idle {s['idle_s']:g} s", "burst": k, "iops": v}
                for s in score["wait_states"] for k, v in enumerate(s["burst_iops"], start=1)]
        lines.append(("bursts", "burst:Q", "burst", "iops:Q", "IOPS", rows))
    charts = []
    for kind, x, x_title, y, y_title, rows in lines:
        chart = alt.Chart(alt.Data(name="rows")).properties(width=WIDTH, height=HEIGHT).mark_line().encode(
            x=alt.X(x, title=x_title), y=alt.Y(y, title=y_title), color=alt.Color("run:N", title=None),
            tooltip=["run:N", x, alt.Tooltip(y, format=",.1f")])
        charts.append(_chart(slug(group.id, kind, tag), f"{group.id} · {run.run.label}: {y_title} per {x_title}",
                             chart, rows=rows))
    return charts
