"""slc-retirement (the aged suite): the whole-drive fill young, the drive aged, the fill again;
its score the SLC cache young and aged, its curves in one chart; skipped on a real target."""

from __future__ import annotations

import json

from ssdlab.catalogue import Scale, lookup
from ssdlab.model import Age, Op, Phase
from ssdlab.telemetry.during_run import RunTelemetry
from ssdlab.telemetry.needs import Need
from ssdlab.telemetry.probe import Telemetry
from ssdlab.units import KiB
from tests.conftest import run_cli
from tests.factories import result
from tests.report.test_report import chart_specs
from tests.report_runs import FILL_CURVE

TB = 10**12
SKIPPED = "it ages the drive as a state, which only a simulated drive can; a real drive ages by writing " \
          "(the endurance suite)"
# The SN850's young cache is about 261 GiB: a fill of 0.3 of the drive (279 GiB) passes it, one
# below about 0.28 ends inside it. The full-size test simulates in about 5 s, this in about 2.
SN850_SCALE = "0.3"


def test_fill_young_age_purge_fill_again():
    test = lookup("slc-retirement").compile(Scale(1.0), TB)
    assert [s.phase for s in test.steps] == [Phase.PURGE, Phase.MEASURE, Phase.AGE, Phase.PURGE, Phase.MEASURE]
    young, age, _, aged = test.steps[1:]
    fill = lookup("whole-drive-fill").compile(Scale(1.0), TB).steps[-1]
    for one in (young, aged):  # the client suite's whole-drive fill, as it is
        assert one.model_dump(exclude={"label"}) == fill.model_dump(exclude={"label"})
        assert (one.rw, one.bs, one.iodepth, one.per_gib_series) == (Op.WRITE, 128 * KiB, 32, True)
    assert (young.label, aged.label) == (f"young {fill.label}", f"aged {fill.label}")
    assert age.age == Age.parse("67%")  # 2010 of 3000 rated cycles on TLC, 670 of 1000 on QLC
    assert lookup("slc-retirement").needs() == (Need.AGE,)
    # --scale shrinks both fills as the whole-drive fill's, never the age
    scaled = lookup("slc-retirement").compile(Scale(0.01), TB).steps
    assert scaled[1].size == scaled[4].size == 10**10 // 2**20 * 2**20 and scaled[2].age == age.age


def test_the_score_is_the_cache_aged_with_the_young_beside_it():
    test = lookup("slc-retirement").compile(Scale(0.01), TB)
    young, aged = (s for s in test.steps if s.phase is Phase.MEASURE)
    flat = [(g, 1500.0) for g in range(1, 33)]  # no sustained drop: no cache
    score = lookup("slc-retirement").score([(young, result(3000.0, direction="write", per_gib=FILL_CURVE)),
                                            (aged, result(1500.0, direction="write", per_gib=flat))])
    assert (score["value"], score["unit"], score["young_slc_cache_gib"], score["retained_pct"]) == (0.0, "GiB", 12, 0)
    assert score["young"]["slc_cache_gib"] == 12 and score["aged"]["slc_cache_gib"] is None
    assert "no SLC cache seen" in score["aged"]["finding"] and score["age"] == "67%"
    kept = lookup("slc-retirement").score([(young, result(direction="write", per_gib=FILL_CURVE))] * 2)
    assert (kept["value"], kept["retained_pct"]) == (12, 100)


def test_only_a_simulated_drive_runs_it():
    telemetry = RunTelemetry(Telemetry())
    assert telemetry.missing(lookup("slc-retirement").needs(), "fio") == SKIPPED
    assert telemetry.missing(lookup("slc-retirement").needs(), "sim") is None


def test_a_real_target_skips_it_before_its_first_step(scratch):
    target, db = scratch / "drive.img", scratch / "ssdlab.db"
    plan = json.loads(run_cli("run", target, "--suite", "aged", "--scale", "0.01", "--dry-run", "--json").stdout)
    assert plan["tests"][0]["skipped"] == SKIPPED and plan["estimated_seconds"] == 0
    run_cli("run", target, "--suite", "aged", "--scale", "0.01", db=db)
    doc = json.loads(run_cli("show", "latest", "--json", db=db).stdout)
    (test,) = doc["tests"]
    assert (doc["run"]["status"], test["status"], test["error"], test["steps"]) == ("done", "skipped", SKIPPED, [])


def test_the_sn850_aged_has_no_cache_left_and_the_report_draws_both_fills(tmp_path):
    """The aged suite on the simulated SN850, whose cache is retired beyond about 2000 P/E (one
    test: under xdist a module fixture would run it once per worker)."""
    db, out = tmp_path / "ssdlab.db", tmp_path / "report.html"
    run_cli("run", "sim:wd-sn850-1tb", "--suite", "aged", "--scale", SN850_SCALE, db=db)
    (test,) = json.loads(run_cli("show", "latest", "--json", db=db).stdout)["tests"]
    score = test["primary_score"]
    young, aged = score["young"], score["aged"]
    assert 200 < score["young_slc_cache_gib"] < 279 and young["slc_cache_gib"] == score["young_slc_cache_gib"]
    assert (score["value"], aged["slc_cache_gib"], score["retained_pct"]) == (0.0, None, 0.0)
    assert aged["value"] < young["value"] / 2  # no cache speed: TLC from the first GiB
    assert [s["phase"] for s in test["steps"]] == ["purge", "measure", "age", "purge", "measure"]
    health = test["health"]
    assert (health["before"]["percentage_used"], health["after"]["percentage_used"]) == (0, 67)
    shown = run_cli("show", "latest", db=db).stdout
    assert "the fill young and aged to 67%" in shown and "none seen" in shown

    run_cli("report", "latest", "-o", out, db=db)
    page = out.read_text(encoding="utf-8")
    specs = chart_specs(page)
    compared = specs["chart-slc-retirement-fill-curve-compared"]
    assert compared["title"] == "slc-retirement: MB/s per GiB written, fills compared"
    series = [f"#1 sim:wd-sn850-1tb · {s['label']}" for s in test["steps"] if s["phase"] == "measure"]
    assert list(dict.fromkeys(row["run"] for row in compared["datasets"]["rows"])) == series
    assert [row["run"] for row in compared["datasets"]["cache_ends"]] == series[:1]  # the young cache's end only
    assert {f"chart-slc-retirement-fill-curve-run-1-step-{k}" for k in (1, 4)} <= set(specs)  # one chart each
    assert f"{series[1]}: no sustained drop" in page
