"""The PTS pages of the report: every chart a PTS reader expects drawn by a real browser from a
stored run of every kind of PTS test, each chart builder rendered from the scores of every PTS
test, the matrices exported as CSV. (A simulated run's pages are the same pages: the run is
stored with figures a fake drive gave, which keeps this test to a second.)"""

import csv
import io
import re

import pytest
import vl_convert

from ssdlab.catalogue import PtsTest, Scale, lookup
from ssdlab.model import Phase, SecondPoint, Step, StepResult
from ssdlab.report import pts_sections
from ssdlab.store import Store
from tests.browser import Chromium, chromium_path
from tests.catalogue.test_pts import TB, FakeRun
from tests.catalogue.test_pts import run as fake_run
from tests.conftest import run_cli
from tests.factories import result

RENDERED_CHARTS = ("[...document.querySelectorAll('figure.chart')]"
                   ".filter(chart => chart.querySelector('svg, canvas')).length")
HEAT_MAP = "document.querySelectorAll('#chart-pts-iops-matrix-run-1 g.mark-rect.role-mark path').length"


def stored_pts_run(db, test_ids) -> None:
    """A finished PTS run of `test_ids` at scale 0.01 whose steps FakeRun measured (every 4 KiB
    write at 50 K IOPS, other cells at 1000), stored as a run on a real device; write
    saturation and cross stimulus recovery with a minute of per-second points per step."""
    tests = [lookup(t).compile(Scale(0.01), TB) for t in test_ids]
    with Store(db) as store:
        run_id = store.create_run(
            name=None, target="/dev/fake0", target_kind="device", suite="pts", suite_toml="", scale=0.01,
            tests=tests, identity={"model": "Fake NVMe", "serial": "S123", "capacity_bytes": TB},
            host={"kernel": "6.1"}, engine={"engine": "fio", "fio_version": "fio-3.33", "ioengine": "libaio"},
            options={})
        for seq, test in enumerate(tests):
            store.start_test(run_id, seq)
            definition = lookup(test.id)
            if isinstance(definition, PtsTest):
                fake = FakeRun(lambda r: 50_000.0 + 1_000.0 * (r % 3))
                found = definition.run(fake, test.steps)
                done, score = fake.done, definition.result(found, fake.done)
            else:
                done = [(step, minute(step)) for step in test.steps]
                score = definition.score([(s, r) for s, r in done if s.phase is Phase.MEASURE])
            for idx, (step, res) in enumerate(done):
                store.save_step(run_id, seq, idx, step, res, ())
            store.finish_test(run_id, seq, score)


def minute(step: Step) -> StepResult:
    """A minute of a write step, per second, slowing down."""
    points = tuple(SecondPoint(t_s=s + 1, mbps=(1000 - 10 * s) * step.bs / 1e6 * 100, iops=(1000 - 10 * s) * 100)
                   for s in range(60))
    return result(mbps=300.0, busy_s=60.0, bs=step.bs, direction="write").model_copy(update={"per_second": points})


@pytest.fixture(scope="module")
def pts_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("pts") / "ssdlab.db"
    stored_pts_run(db, ["pts-iops", "pts-latency", "pts-dirth", "pts-hir", "pts-wsat", "pts-xsr"])
    return db


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed: `make setup` installs it")
def test_the_pts_pages_render_in_a_browser(pts_run, tmp_path):
    report = tmp_path / "report.html"
    run_cli("report", "1", "-o", report, db=pts_run)
    html = report.read_text()
    expected = len(re.findall(r'<figure class="chart"', html))
    for chart in ("pts-iops-convergence-run-1-0", "pts-iops-matrix-run-1", "pts-latency-convergence-run-1-0",
                  "pts-dirth-demand-intensity-run-1", "pts-wsat-time-run-1", "pts-wsat-written-run-1",
                  "pts-hir-bursts-run-1", "pts-xsr-accesses-run-1"):
        assert f'id="chart-{chart}"' in html, chart
    assert 'id="chart-pts-iops-window-run-1-0-rnd-4-kib-0-100"' in html
    for said in ("PTS header", "steady at round 5", "threads x queue depth", "2 x 16", "not PTS-conformant",
                 "Measurement window means", "/dev/fake0"):
        assert said in html, said
    with Chromium() as page:
        page.open(report.as_uri())
        status = page.wait_for("document.body && document.body.dataset.charts")
        rendered = page.evaluate(RENDERED_CHARTS)
        cells = page.evaluate(HEAT_MAP)
        errors = page.errors
    assert status == "rendered" and errors == [] and rendered == expected
    assert cells == 56  # 8 block sizes x 7 read shares


def test_the_matrices_export_as_csv_a_row_per_cell(pts_run):
    rows = list(csv.DictReader(io.StringIO(run_cli("export", "1", "--format", "pts-csv", db=pts_run).stdout)))
    by_test = {t: [r for r in rows if r["test"] == t] for t in {r["test"] for r in rows}}
    assert len(by_test["pts-iops"]) == 56 and len(by_test["pts-latency"]) == 18  # mean and maximum of 9 cells
    assert len(by_test["pts-dirth"]) == 2 * 49  # IOPS and mean response time of every load
    assert "pts-wsat" not in by_test and "pts-xsr" not in by_test  # no rounds: their curves are in the JSON
    write = next(r for r in by_test["pts-iops"] if r["cell"] == "RND 4 KiB 0/100")
    assert float(write["window mean"]) > 0 and write["figure"] == "IOPS" and write["steady"] == "True"


@pytest.mark.parametrize("test_id", ["pts-iops", "pts-e-throughput", "pts-latency", "pts-dirth", "pts-hir"])
def test_every_loop_chart_renders_from_a_pts_score(test_id):
    *_, score = fake_run(test_id, lambda r: 50_000.0 + 1_000.0 * (r % 3))
    for k, loop in enumerate(score["loops"]):
        charts = [pts_sections._convergence(f"c{k}", "convergence", loop)]
        charts += [pts_sections._window(f"w{k}", "window", cell, loop["figure"], tracked)
                   for cell, tracked in loop["tracked"].items() if tracked["window"]]
        if loop["name"] == "IOPS":
            charts.append(pts_sections._heat_map("m", "matrix", loop))
        if loop["name"] == "demand intensity":
            charts.append(pts_sections._demand("d", "demand", loop))
        for chart in charts:
            assert vl_convert.vegalite_to_svg(chart.spec).startswith("<svg"), chart.name
