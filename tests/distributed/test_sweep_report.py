"""A sweep's HTML page (`ssdlab sweeps report`), drawn by a real browser as the runs' report is
(tests/report/test_report_browser.py): every chart drawn with no console error, the table a row
per variant with its values and scores; a grid's lines per value of the other key, a sampled
sweep's points, a sweep's failed and unrun variants shown as such, and bad input refused in one
line. One database holds a real 2 x 2 grid and two sweeps of synthetic runs (stored_sweeps.py);
the three pages are opened in one browser."""

from __future__ import annotations

import json
import re

import pytest

from ssdlab.cli.sweeps import report_sweep
from ssdlab.distributed.overrides import variant_name
from ssdlab.distributed.results import ScoreColumn, SweepTable, VariantRow, sweep_table
from ssdlab.distributed.specs import SweepSpec
from ssdlab.presets import load_preset
from ssdlab.report.sweep_sections import MAX_LINES, score_text, sweep_view
from ssdlab.store import Store
from ssdlab.store.sweeps import SweepRecord
from tests.browser import Chromium, chromium_path
from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.distributed.stored_sweeps import stored_sweep
from tests.distributed.test_sweeps import GRID, OPTIONS

# What the browser drew: each chart's marks and axes, the results table, the facts, the notes.
DRAWN = """(() => ({
  status: document.body.dataset.charts,
  charts: Object.fromEntries([...document.querySelectorAll('figure.chart')].map(f => [f.id.replace('chart-', ''), {
    svg: f.querySelector('svg') !== null,
    lines: f.querySelectorAll('g.mark-line.role-mark path').length,
    points: f.querySelectorAll('g.mark-symbol.role-mark path').length,
    axes: [...f.querySelectorAll('g.role-axis')].filter(a => a.querySelector('g.role-axis-title text'))
      .map(a => [a.querySelector('g.role-axis-title text').textContent,
                 [...a.querySelectorAll('g.role-axis-label text')].map(t => t.textContent)]),
    legend: [...f.querySelectorAll('g.role-legend-title text')].map(t => t.textContent),
    gradient: f.querySelector('g.role-legend-gradient') !== null}])),
  rows: [...document.querySelectorAll('#results tbody tr')].map(tr => [...tr.cells].map(td => td.textContent)),
  facts: Object.fromEntries([...document.querySelectorAll('header tbody tr')]
    .map(tr => [tr.cells[0].textContent, tr.cells[1].textContent])),
  findings: [...document.querySelectorAll('.finding')].map(p => p.textContent)}))()"""

# sweep 3: dies per channel, the idle fold (a boolean: a categorical axis) and a cell share of one value
PARTIAL = ("geometry.dies_per_channel=4,8", "cache.idle_fold=true,false", "cache.max_cell_share=0.5")
SAMPLE = ("cache.max_cell_share=0.2..0.8", "geometry.dies_per_channel=4..8")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """Sweep 1: the 2 x 2 grid of test_sweeps.py, simulated; 2: 5 random samples; 3: a grid
    whose variant 1 failed its second test and whose variant 3 did not run. Each one's page,
    what `sweeps report` printed and its table as `sweeps show --json` prints it."""
    work = tmp_path_factory.mktemp("sweep-report")
    db = work / "ssdlab.db"
    run_cli("sweep", "wd-sn850-1tb", *GRID, *OPTIONS, "--json", db=db)
    stored_sweep(db, SweepSpec(ranges=SAMPLE, samples=5),
                 lambda o: 100 * o["drive.geometry.dies_per_channel"] * o["drive.cache.max_cell_share"])
    stored_sweep(db, SweepSpec(sets=PARTIAL),
                 lambda o: 100 * o["drive.geometry.dies_per_channel"] * (2 if o["drive.cache.idle_fold"] else 1),
                 failed={1}, not_run={3})
    pages = {}
    for sweep in (1, 2, 3):
        page = work / f"sweep-{sweep}.html"
        if sweep == 1:  # through the command line; the others in-process, to keep this quick
            said = run_cli("sweeps", "report", "1", "-o", page, db=db).stdout
        else:
            said, _ = "", report_sweep(str(sweep), page, svg=work / "svg" if sweep == 3 else None, db=db)
        with Store.open_existing(db) as store:
            table = sweep_table(store, sweep).document()
        pages[sweep] = {"page": page, "said": said, "table": table, "html": page.read_text()}
    return db, pages


@pytest.fixture(scope="module")
def drawn(stored):
    """Each page as the browser drew it, beside what `stored` gives of it."""
    if chromium_path() is None:
        pytest.skip("chromium is not installed: `make setup` (scripts/ensure-system-deps) installs it")
    _, pages = stored
    with Chromium() as browser:
        for page in pages.values():
            browser.open(page["page"].as_uri())
            browser.wait_for("document.body && document.body.dataset.charts")
            page["drawn"] = browser.evaluate(DRAWN)
        errors = browser.errors
    assert errors == []
    return pages


def expected_rows(table: dict) -> list[list[str]]:
    """The results table as the page should show it: from `sweeps show --json`."""
    def value(v):
        return json.dumps(v) if isinstance(v, bool) else str(v)
    return [[v["name"], "" if v["run_id"] is None else str(v["run_id"]), v["status"],
             *(value(v["overrides"][k]) for k in table["keys"]),
             *(score_text(v["scores"].get(s["test"]), s["unit"]) for s in table["scores"])]
            for v in table["variants"]]


def test_a_grid_draws_each_score_against_each_key_a_line_per_value_of_the_other(drawn):
    page = drawn[1]
    drawn_page = page["drawn"]
    assert drawn_page["status"] == "rendered"
    assert "4 variants, 4 charts" in page["said"]
    assert len(re.findall(r'<figure class="chart"', page["html"])) == len(drawn_page["charts"]) == 4
    for test, score in (("rand-read-burst", "MB/s during bursts (MB/s)"),
                        ("seq-write-sustained", "mean MB/s of QD1, QD2 and QD4 (MB/s)")):
        for key, other in (("cache.max_cell_share", "geometry.dies_per_channel"),
                           ("geometry.dies_per_channel", "cache.max_cell_share")):
            chart = drawn_page["charts"][f"sweep-{test}-against-{re.sub('[._]', '-', key)}"]
            assert chart["svg"] and chart["lines"] == 2 and chart["points"] == 4, (test, key)
            assert [title for title, _ in chart["axes"]] == [key, score]
            assert chart["legend"] == [other] and not chart["gradient"]
    assert drawn_page["rows"] == expected_rows(page["table"])
    assert [row[2] for row in drawn_page["rows"]] == ["done"] * 4
    facts = drawn_page["facts"]
    assert facts["variants given as"] == ("a grid of 4 variants: --set cache.max_cell_share=0.3,0.7 "
                                          "--set geometry.dies_per_channel=4,8")
    assert (facts["base preset"], facts["suite"], facts["scale"], facts["variants"]) == (
        "wd-sn850-1tb", "quick", "0.01", "4: 4 done")
    assert facts["tests"] == "rand-read-burst, seq-write-sustained"
    assert "ssdlab sweeps show 1 --csv FILE" in page["html"] and "ssdlab report RUN" in page["html"]


def test_random_samples_are_points_coloured_by_the_other_key(drawn):
    drawn_page = drawn[2]["drawn"]
    assert drawn_page["status"] == "rendered" and len(drawn_page["charts"]) == 4
    for name, chart in drawn_page["charts"].items():
        assert chart["svg"] and chart["lines"] == 0 and chart["points"] == 5, name
        assert chart["gradient"], name  # the other key's value, a number: a colour gradient
    assert drawn_page["rows"] == expected_rows(drawn[2]["table"])
    assert drawn_page["facts"]["variants given as"] == (
        "5 random samples, seed 1: --sample cache.max_cell_share=0.2..0.8 --sample geometry.dies_per_channel=4..8")


def test_failed_and_unrun_variants_are_shown_and_charts_without_two_values_left_out(drawn):
    page = drawn[3]
    drawn_page = page["drawn"]
    assert drawn_page["status"] == "rendered"
    rows = drawn_page["rows"]
    assert rows == expected_rows(page["table"])
    assert [(row[1], row[2]) for row in rows] == [("10", "done"), ("11", "failed"), ("12", "done"), ("", "not run")]
    assert rows[1][-1] == rows[3][-1] == rows[3][-2] == ""  # the failed test's score, the unrun variant's
    assert rows[1][-2].endswith(" MB/s")  # the failed variant's first test was scored
    assert drawn_page["facts"]["variants"] == "4: 2 done, 1 failed, 1 not run"
    assert set(drawn_page["charts"]) == {"sweep-rand-read-burst-against-geometry-dies-per-channel",
                                         "sweep-rand-read-burst-against-cache-idle-fold",
                                         "sweep-seq-write-sustained-against-geometry-dies-per-channel"}
    assert all(chart["svg"] for chart in drawn_page["charts"].values())
    # the idle fold is a boolean: a categorical axis, in the order of the sweep; a line per dies
    # per channel (8 has only the variant that ran with the fold on: one point, no line)
    fold = drawn_page["charts"]["sweep-rand-read-burst-against-cache-idle-fold"]
    assert fold["axes"][0] == ["cache.idle_fold", ["true", "false"]]
    assert (fold["points"], fold["legend"]) == (3, ["geometry.dies_per_channel"])
    assert drawn_page["findings"] == [
        "cache.max_cell_share has one value in every variant (0.5): no chart against it",
        "no chart against cache.idle_fold: the variants scored on it all have true"]
    assert sorted(p.name for p in (page["page"].parent / "svg").iterdir()) == sorted(
        f"{name}.svg" for name in drawn_page["charts"])


@pytest.mark.parametrize("args, says", [
    (["9", "-o", "{tmp}/page.html"], "there is no sweep 9 in"),
    (["first", "-o", "{tmp}/page.html"], "'first' is not a sweep id"),
    (["1", "-o", "{tmp}/missing/page.html"], "cannot write the report to {tmp}/missing/page.html: No such file or "
                                             "directory; give another path with -o"),
])
def test_bad_input_is_one_line_and_writes_nothing(stored, tmp_path, args, says):
    db, _ = stored
    refused(run_cli("sweeps", "report", *(a.format(tmp=tmp_path) for a in args), db=db, check=False),
            says.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []


# -- the page's parts, from a table made here ------------------------------------------------

SHARE, DIES = "drive.cache.max_cell_share", "drive.geometry.dies_per_channel"


def listed_table(rows: list[dict]) -> SweepTable:
    """A finished list sweep of the SN850 whose variants set `rows`' keys, one test scored."""
    sweep = SweepRecord(1, "wd-sn850-1tb", load_preset("wd-sn850-1tb").text, "quick", {"variants": "v.toml"},
                        {"tests": ["rand-read-burst"], "scale": 0.01, "repeat": 1}, "2026-01-01T00:00:00+00:00")
    variants = [VariantRow(variant_name("wd-sn850-1tb", overrides), overrides, k + 1, "done",
                           {"rand-read-burst": 100.0 + k}) for k, overrides in enumerate(rows)]
    keys = list(dict.fromkeys(key for overrides in rows for key in overrides))
    return SweepTable(sweep, keys, [ScoreColumn("rand-read-burst", "MB/s during bursts", "MB/s")], variants)


def test_a_key_a_listed_variant_leaves_out_has_the_base_value():
    view = sweep_view(listed_table([{DIES: 4, SHARE: 0.3}, {DIES: 8}]))
    assert [row[3:5] for row in view.results.rows] == [("4", "0.3"), ("8", "0.767 (base)")]
    share = next(c for c in view.charts if c.name.endswith("max-cell-share"))
    assert [r["value"] for r in share.spec["datasets"]["rows"]] == [0.3, 0.767]


def test_more_lines_than_colours_are_points():
    view = sweep_view(listed_table([{DIES: dies, SHARE: share} for dies in range(1, MAX_LINES + 2)
                                    for share in (0.3, 0.7)]))
    marks = {chart.name.rsplit("-against-", 1)[1]: chart.spec["mark"]["type"] for chart in view.charts}
    assert marks == {"geometry-dies-per-channel": "line", "cache-max-cell-share": "point"}
    assert view.sections[0].findings == (
        f"rand-read-burst: MB/s during bursts against cache.max_cell_share: {MAX_LINES + 1} combinations of "
        "geometry.dies_per_channel are too many for a line each: points only",)
