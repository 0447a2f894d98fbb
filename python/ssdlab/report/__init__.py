"""Reports of stored runs and sweeps: one self-contained HTML page, and every chart as PNG/SVG.

    data      the store -> plain per-test, per-run records (`gather`)
    summary   the primary-score table, shared with `ssdlab compare`
    charts    Vega-Lite chart specs (altair), units on every axis
    sections  the section of each test, chosen by the shape of its measured steps
    lab_sections  the shapes of the lab and enterprise tests (registered here)
    power_sections  the charts of the power suite's scores (idle-wake's wake-up latency)
    sweep_sections  a sweep's page: its variants' table, each score against each swept key
    page      the HTML pages (jinja2, autoescaped; templates/base.html.j2 frames both), with Vega inlined
    export    the charts as PNG and SVG files
"""

from ssdlab.report import lab_sections  # noqa: E402,F401  registers its section shapes
