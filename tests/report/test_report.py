"""`ssdlab report`: the structure of the page, escaping, self-containment, chart files."""

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from ssdlab.report.sections import anchor
from ssdlab.store import Store
from tests.conftest import run_cli
from tests.report_runs import HOSTILE_MODEL, HOSTILE_NAME, sim_runs, synthetic_run

LAB_TESTS = ["bs-sweep", "seq-write-states", "max-write-latency", "trim", "rand-read-burst",
             "whole-drive-fill"]


DEVICE_NOTE = "no telemetry: nvme-cli is not installed (apt install nvme-cli)"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Runs 1, 2: the quick suite on two simulated drives; run 3: synthetic lab and
    enterprise tests on a 'device' whose model name is HTML."""
    path = tmp_path_factory.mktemp("report") / "ssdlab.db"
    sim_runs(path)
    synthetic_run(path, LAB_TESTS)
    with Store(path) as store:
        store.add_telemetry_notes(3, [DEVICE_NOTE])
    return path


@pytest.fixture(scope="module")
def page(db, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    run_cli("report", "1", "2", "3", "-o", out, db=db)
    return out.read_text(encoding="utf-8")


class Structure(HTMLParser):
    """Sections (id, shape), their chart ids and the row count of their tables."""

    def __init__(self):
        super().__init__()
        self.sections, self.scripts, self._in_tbody = [], [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append({"id": a["id"], "shape": a.get("data-shape"), "charts": [],
                                  "rows": []})
        elif tag == "figure" and "chart" in a.get("class", ""):
            self.sections[-1]["charts"].append(a["id"])
        elif tag == "tbody":
            self.sections[-1]["rows"].append(0)
        elif tag == "tr" and self._in_tbody:
            self.sections[-1]["rows"][-1] += 1
        elif tag == "script":
            self.scripts.append(a)
        self._in_tbody = self._in_tbody or tag == "tbody"

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_tbody = False


def structure(html):
    parser = Structure()
    parser.feed(html)
    return parser


def test_report_structure_snapshot(page):
    """Summary first, one section per test of any run (in first-seen order), each with
    the charts of its shape, then the run conditions."""
    got = {s["id"]: (s["shape"], len(s["charts"]), s["rows"]) for s in structure(page).sections}
    assert list(got) == ["summary", "test-rand-read-burst", "test-seq-write-sustained",
                         "test-mixed-random", "test-whole-drive-fill", "test-bs-sweep",
                         "test-seq-write-states", "test-max-write-latency", "test-trim",
                         "conditions"]
    # shape, charts, rows of each table (steps and directions, then conditions per run)
    assert got["summary"] == (None, 0, [8])
    # a simulated run's tests have the drive's health before and after: 16 rows each (its
    # temperature among them, and the data it wrote to flash from its Endurance Group log
    # with the write amplification), and a temperature chart beside the throughput
    health = [16, 16]
    assert got["test-rand-read-burst"] == ("generic", 2, [3, *health, 3])     # the score bars
    assert got["test-seq-write-sustained"] == ("qd", 3, [12, *health, 2])     # 6 QDs x 2 runs
    assert got["test-mixed-random"] == ("mix", 3, [40, *health, 2])           # 11 mixes, 9 with 2 dirs
    assert got["test-whole-drive-fill"] == ("fill", 6, [3, *health, 3])       # compared + 1 per run + score
    assert got["test-bs-sweep"] == ("bs", 2, [48, 1])
    assert got["test-seq-write-states"] == ("states", 3, [3, 1])   # per state, per second
    assert got["test-max-write-latency"] == ("cases", 2, [5, 1])
    assert got["test-trim"] == ("trim", 3, [3, 1])                 # latency, writes around
    assert got["conditions"][0] is None and len(got["conditions"][2]) == 3


def test_chart_specs_are_inline_with_units_on_every_axis(page):
    specs = chart_specs(page)
    assert set(specs) == {c for s in structure(page).sections for c in s["charts"]}
    assert "chart-test-whole-drive-fill" not in specs  # ids are chart names
    for name, spec in specs.items():
        titles = [t for t in axis_titles(spec) if t]
        assert titles, name
        units = r"\((MB/s|GiB|QD|%|KiB|IOPS|ms|µs|s|ops/s|K IOPS|°C)\)$"
        assert all(re.search(units, t) for t in titles), (name, titles)


def chart_specs(html):
    text = re.search(r'<script type="application/json" id="chart-specs">(.*?)</script>',
                     html, re.S).group(1)
    return json.loads(text)


def axis_titles(node):
    """Titles of the x and y encodings anywhere in a spec (layers, facets)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("x", "y") and isinstance(value, dict) and "field" in value:
                yield value.get("title")
            else:
                yield from axis_titles(value)
    elif isinstance(node, list):
        for value in node:
            yield from axis_titles(value)


def test_fill_chart_marks_the_cache_boundary_and_shades_the_phases(page):
    spec = chart_specs(page)["chart-whole-drive-fill-fill-curve-run-3-step-1"]
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rect", "line", "rule"]
    assert [(p["kind"], p["start_gib"], p["end_gib"]) for p in spec["datasets"]["phases"]] == \
        [("cache", 0, 12), ("native", 12, 32)]
    assert spec["datasets"]["cache_ends"] == [{"run": "#3 /dev/fake0", "gib": 12}]
    assert "SLC cache of about 12 GiB at 3000 MB/s" in page


def test_what_telemetry_could_not_read_is_in_the_conditions_and_nothing_alarms(page):
    conditions = page[page.index('id="conditions"'):]
    # the simulated drives' telemetry is complete; the device's run has the note of its own
    assert conditions.count("<td>telemetry note</td>") == 1
    assert f"<td>telemetry note</td><td>{DEVICE_NOTE}</td>" in conditions
    assert 'id="alarms"' not in page


def test_page_is_self_contained(page):
    scripts = structure(page).scripts
    assert [s.get("src") for s in scripts] == [None, None, None]  # nothing to fetch
    assert "vegaEmbed" in page and "<link" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_strings_from_users_and_devices_are_text(page):
    # In HTML: escaped text; exactly the page's own three script elements.
    assert page.count("<script") == 3 and page.count("</script>") == 3
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert HOSTILE_MODEL not in page and "&lt;img src=x onerror=" in page
    # In the chart data: JSON text that cannot close the script element, and that
    # JSON.parse turns back into the name (the legend then shows it as text).
    labels = {row["run"] for spec in chart_specs(page).values()
              for rows in spec["datasets"].values() for row in rows if "run" in row}
    assert f"#1 {HOSTILE_NAME}" in labels


def test_summary_shows_scores_and_differences_to_the_first_run(db, page):
    doc = json.loads(run_cli("compare", "1", "2", "--json", db=db).stdout)
    fill = next(t for t in doc["tests"] if t["id"] == "whole-drive-fill")
    first, second = fill["runs"]
    summary = page[page.index('id="summary"'):page.index(f'id="{anchor("rand-read-burst")}"')]
    assert f'{second["relative_pct"]:+.1f} %' in summary
    assert f'{first["value"]:,.1f} MB/s' in summary


def test_png_and_svg_of_every_chart(db, tmp_path):
    out = tmp_path / "r.html"
    proc = run_cli("report", "2", "-o", out, "--png", tmp_path / "png", "--svg", tmp_path / "svg",
                   db=db)
    charts = chart_specs(out.read_text())
    assert f"{len(charts)} charts" in proc.stdout
    names = {c.removeprefix("chart-") for c in charts}
    assert {p.stem for p in (tmp_path / "png").iterdir()} == names
    assert {p.stem for p in (tmp_path / "svg").iterdir()} == names
    for png in (tmp_path / "png").iterdir():
        assert png.suffix == ".png" and png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    for svg in (tmp_path / "svg").iterdir():
        assert ET.parse(svg).getroot().tag.endswith("svg")


def test_user_mistakes_are_clear_errors(db, tmp_path):
    for args, message in ((["99"], "there is no run 99"),
                          (["1", "1"], "given more than once"),
                          (["abc"], "is not a run id")):
        proc = run_cli("report", *args, "-o", tmp_path / "r.html", db=db, check=False)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("report", "1", "-o", tmp_path / "missing" / "r.html", db=db, check=False)
    assert proc.returncode == 2 and "cannot write the report" in proc.stderr
    (tmp_path / "file").write_text("")
    proc = run_cli("report", "1", "-o", tmp_path / "r.html", "--svg", tmp_path / "file", db=db,
                   check=False)
    assert proc.returncode == 2 and "cannot write the SVG charts" in proc.stderr


def test_efficiency_columns_appear_when_energy_is_known(tmp_path):
    db = tmp_path / "ssdlab.db"
    synthetic_run(db, ["rand-read-burst"], mbps=100.0, energy_j=4.0)  # 1 s at 4 W
    synthetic_run(db, ["rand-read-burst"], mbps=100.0)
    with_energy, without = tmp_path / "a.html", tmp_path / "b.html"
    run_cli("report", "1", "-o", with_energy, db=db)
    run_cli("report", "2", "-o", without, db=db)
    assert "<th>MB/s per W</th>" in with_energy.read_text()
    assert "<td>4.00</td><td>25.1</td>" in with_energy.read_text()  # W, MB/s per W
    assert "<th>MB/s per W</th>" not in without.read_text()


def test_the_temperature_chart_fits_the_measured_steps_and_names_them_in_the_chart(page):
    """A preconditioning write many times faster than the measured steps would flatten them
    to a line at zero: the throughput axis ends just above the measured steps' fastest
    second (faster points cut there), and each step's name is text in the chart, not only
    in a tooltip, so an exported image keeps it."""
    specs = {name: spec for name, spec in chart_specs(page).items() if name.endswith("-temperature")}
    assert specs
    burst = specs["chart-rand-read-burst-temperature"]  # QD1 reads after a preconditioning write
    line = next(layer for layer in burst["vconcat"][0]["layer"] if layer["mark"]["type"] == "line")
    top = line["encoding"]["y"]["scale"]["domain"][1]
    rows = burst["datasets"]["throughput"]
    assert line["mark"]["clip"] is True and max(r["mbps"] for r in rows) > 3 * top  # the write, cut
    assert sum(r["mbps"] <= top for r in rows) >= len(rows) // 2
    for name, spec in specs.items():
        layers = spec["vconcat"][0]["layer"]
        texts = [layer for layer in layers if layer["mark"]["type"] == "text"]
        rules = [layer for layer in layers if layer["mark"]["type"] == "rule"]
        assert len(texts) == len(rules) <= 1, name
        if texts:
            assert texts[0]["encoding"]["text"]["field"] == "step"
