"""Report sections of the lab and enterprise suites, on real simulator runs."""

import json
import re

import pytest

from tests.conftest import run_cli

PRESET = "sim:tests/data/small-tlc.toml"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    db = tmp_path_factory.mktemp("lab-report") / "ssdlab.db"
    for suite in ("lab", "enterprise"):
        run_cli("run", PRESET, "--suite", suite, "--scale", "0.1", db=db)
    out = db.parent / "report.html"
    run_cli("report", "1", "2", "-o", out, db=db)
    return out.read_text(encoding="utf-8")


def shapes(html):
    return dict(re.findall(r'<section id="test-([a-z0-9-]+)" class="test" data-shape="([a-z]+)"', html))


def specs(html):
    text = re.search(r'<script type="application/json" id="chart-specs">(.*?)</script>',
                     html, re.S).group(1)
    return json.loads(text)


def test_every_lab_and_enterprise_test_has_its_section(page):
    assert shapes(page) == {
        "seq-write-states": "states", "rand-write-states": "states", "trim": "trim",
        "max-write-latency": "cases", "qos-rand-read-qd1": "qos", "qos-rand-write-qd1": "qos",
        "qd1-seq-read": "generic", "qd1-seq-write": "generic", "bs-sweep": "bs"}


def test_fill_states_show_each_state_and_its_curve(page):
    charts = specs(page)
    bars = charts["chart-seq-write-states-per-state"]["datasets"]["rows"]
    assert [b["group"] for b in bars] == ["10% filled", "90% filled", "full, half trimmed"]
    assert all(b["value"] > 0 for b in bars)
    curve = charts["chart-rand-write-states-stability"]["datasets"]["rows"]
    assert {p["state"] for p in curve} == {"10% filled", "90% filled", "full, half trimmed"}
    assert re.search(r"10% filled [\d,.]+ K IOPS, 90% filled [\d,.]+ K IOPS \([+-]\d+ %\)", page)


def test_trim_section_gives_its_rate_latency_and_the_writes_around_it(page):
    charts = specs(page)
    latency = charts["chart-trim-trim-latency"]["datasets"]["rows"]
    assert [r["group"] for r in latency] == ["mean", "max"]
    assert latency[0]["value"] <= latency[1]["value"]
    writes = charts["chart-trim-write-around-trim"]["datasets"]["rows"]
    assert [w["group"] for w in writes] == ["before TRIM", "after TRIM"]
    assert re.search(r"\d+ TRIMs at [\d,]+ ops/s, mean [\d.]+ ms, max [\d.]+ ms; sequential "
                     r"write [\d,]+ MB/s before, [\d,]+ MB/s after", page)


def test_max_write_latency_per_case_and_qos_percentiles(page):
    charts = specs(page)
    cases = charts["chart-max-write-latency-max-latency"]["datasets"]["rows"]
    assert len(cases) == 5 and all(c["value"] > 0 for c in cases)
    assert any("512 B" in c["group"] for c in cases)
    qos = charts["chart-qos-rand-read-qd1-latency-percentiles"]["datasets"]["rows"]
    assert [q["group"] for q in qos] == ["read mean", "read p99", "read p99.9", "read p99.99"]
    values = [q["value"] for q in qos[1:]]
    assert values == sorted(values)
