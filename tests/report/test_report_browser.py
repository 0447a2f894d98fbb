"""The report in a real browser: Debian's chromium, headless, over the DevTools
protocol. The page must render every chart with no console error, show hostile
run names as text, and look right in the screenshot saved beside the test."""

import re

import pytest

from tests.browser import Chromium, chromium_path
from tests.conftest import run_cli
from tests.report_runs import HOSTILE_NAME, sim_runs, synthetic_run, wake_run

pytestmark = pytest.mark.skipif(
    chromium_path() is None,
    reason="chromium is not installed: `make setup` (scripts/ensure-system-deps) installs "
           "Debian's chromium when run as root, or `apt-get install chromium`")

RENDERED_CHARTS = ("[...document.querySelectorAll('figure.chart')]"
                   ".filter(chart => chart.querySelector('svg, canvas')).length")
# The marks drawn in idle-wake's chart of the runs compared, and its axis titles.
WAKE_CHART = """(() => {
  const chart = document.getElementById('chart-idle-wake-wake-latency-compared');
  return {lines: chart.querySelectorAll('g.mark-line.role-mark path').length,
          points: chart.querySelectorAll('g.mark-symbol.role-mark path').length,
          spreads: chart.querySelectorAll('g.mark-rule.role-mark line').length,
          axes: [...chart.querySelectorAll('g.role-axis-title text')].map(t => t.textContent)};
})()"""


def test_report_renders_every_chart_without_console_errors(tmp_path):
    db = tmp_path / "ssdlab.db"
    sim_runs(db)
    synthetic_run(db, ["bs-sweep", "max-write-latency", "whole-drive-fill"])
    wake_run(db, "drive a")
    wake_run(db, "drive b", exits_us=(1500, 6000))
    report = tmp_path / "report.html"
    run_cli("report", "1", "2", "3", "4", "5", "-o", report, db=db)
    expected = len(re.findall(r'<figure class="chart"', report.read_text()))

    with Chromium() as page:
        page.call("Page.addScriptToEvaluateOnNewDocument",
                  source="window.alert = (m) => console.error('alert called: ' + m);")
        page.open(report.as_uri())
        status = page.wait_for("document.body && document.body.dataset.charts")
        rendered = page.evaluate(RENDERED_CHARTS)
        wake = page.evaluate(WAKE_CHART)
        header = page.evaluate("document.querySelector('header').textContent")
        page.screenshot(tmp_path / "report.png")
        errors = page.errors

    assert status == "rendered" and errors == []
    # the simulated runs' tests: a temperature chart each (4); idle-wake: runs compared, one
    # per run, its steps, its score
    assert rendered == expected == 23
    # a line per run and policy, a point and a spread (median to max) per idle length on each
    assert wake == {"lines": 4, "points": 36, "spreads": 36,
                    "axes": ["idle before the read (s)", "wake-up latency, first read minus warm read (µs)"]}
    assert HOSTILE_NAME in header  # shown as text, and never run (no alert above)
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
