"""`run --repeat N`: each measured step N times, scores with their spread, and comparisons
that say when a difference lies inside it."""

import json

import pytest

from ssdlab.backends import StepOutcome
from ssdlab.model import DirectionResult, Latency, SecondPoint, StepResult
from ssdlab.repeats import alike, repeated
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET

TESTS = "rand-read-burst,seq-write-sustained"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("repeat") / "ssdlab.db"
    for repeat in ("3", "3", "1"):
        run_cli("run", f"sim:{SMALL_PRESET}", "--tests", TESTS, "--scale", "0.001", "--repeat", repeat, db=path)
    return path


def test_measured_steps_run_n_times_and_scores_carry_their_spread(db):
    doc = json.loads(run_cli("export", "1", db=db).stdout)
    assert doc["run"]["repeat"] == 3
    for test in doc["tests"]:
        score = test["primary_score"]
        spread = score["spread"]
        assert spread["runs"] == 3 and spread["min"] <= score["value"] <= spread["max"]
        measured = [s for s in test["steps"] if s["phase"] == "measure"]
        for step in measured:
            runs = step["result"]["repetitions"]
            assert len(runs) == 3
            # the step's figures are its runs together: its I/O rate the mean over their time
            assert min(r["iops"] for r in runs) <= step["result"]["iops"] <= max(r["iops"] for r in runs)
        unmeasured = [s for s in test["steps"] if s["phase"] != "measure"]
        assert all("repetitions" not in s["result"] for s in unmeasured)
    plain = json.loads(run_cli("export", "3", db=db).stdout)
    assert plain["run"]["repeat"] == 1 and all("spread" not in t["primary_score"] for t in plain["tests"])


def test_show_compare_and_the_report_give_the_spread_and_what_lies_inside_it(db, tmp_path):
    shown = run_cli("show", "1", db=db).stdout
    assert "repeat 3" in shown and "3 runs)" in shown
    compared = json.loads(run_cli("compare", "1", "2", "3", "--json", db=db).stdout)
    for test in compared["tests"]:
        first, second, plain = test["runs"]
        assert first["spread"]["runs"] == 3 and second["within_spread"] is True
        assert "spread" not in plain and plain["relative_pct"] is not None
    # one measured step on the same simulated drive and seed: the plain run is the first
    # of the repeated run's three, inside their spread
    burst = next(t for t in compared["tests"] if t["id"] == "rand-read-burst")
    assert burst["runs"][2]["within_spread"] is True
    table = " ".join(run_cli("compare", "1", "2", db=db).stdout.split())
    assert "over 3 runs" in table and "(within spread)" in table
    out = tmp_path / "r.html"
    run_cli("report", "1", "2", "-o", out, db=db)
    page = out.read_text()
    assert "over 3 runs" in page and "measured steps run" in page


@pytest.mark.parametrize("repeat", ["0", "11", "-1"])
def test_a_repeat_out_of_range_is_refused(repeat, tmp_path):
    proc = run_cli("run", f"sim:{SMALL_PRESET}", "--tests", "rand-read-burst", "--scale", "0.001",
                   "--repeat", repeat, db=tmp_path / "x.db", check=False)
    assert proc.returncode == 2 and "give 1 to 10" in proc.stderr and "Traceback" not in proc.stderr


def result(busy_s, ios, seconds):
    lat = Latency.from_histogram([(1000, ios)], 1000.0, 1000, 1000)
    return StepResult(started_at="t", busy_s=busy_s, idle_s=0.5, engine="sim",
                      per_second=tuple(SecondPoint(t_s=t, mbps=1.0, iops=1.0) for t in seconds),
                      read=DirectionResult(ios=ios, bytes=ios * 4096, busy_s=busy_s, latency=lat),
                      device={"host_read_bytes": ios * 4096.0, "mapped_bytes": 7.0})


def test_runs_together_are_their_i_o_added_up_end_to_end():
    a, b = result(1.0, 100, [1.0]), result(2.0, 300, [1.0, 2.0])
    r = repeated([StepOutcome(a, ("a",)), StepOutcome(b, ("b",))]).result
    assert (r.busy_s, r.idle_s, r.read.ios) == (3.0, 1.0, 400) and r.iops == pytest.approx(400 / 3)
    assert [p.t_s for p in r.per_second] == [1.0, 2.5, 3.5]  # the second run after the first's idle
    assert r.device == {"host_read_bytes": 400 * 4096.0, "mapped_bytes": 7.0}  # flows add, states last
    assert r.repetitions == (a, b)


def test_scores_are_alike_when_their_spreads_overlap():
    spread = {"value": 100.0, "spread": {"min": 95.0, "max": 105.0, "runs": 3}}
    assert alike(spread, {"value": 104.0}) and not alike(spread, {"value": 106.0})
    assert alike(spread, {"value": 110.0, "spread": {"min": 104.0, "max": 112.0, "runs": 3}})
    assert not alike({"value": 100.0}, {"value": 100.0})  # no spread: nothing to say


def test_a_dry_run_counts_the_repeats_in_its_estimate(tmp_path):
    def estimate(repeat):
        doc = json.loads(run_cli("run", f"sim:{SMALL_PRESET}", "--tests", "seq-write-sustained", "--scale",
                                 "0.01", "--repeat", repeat, "--dry-run", "--json", db=tmp_path / "x.db").stdout)
        return doc["estimated_seconds"] if "estimated_seconds" in doc else doc[0]["estimated_seconds"]
    once, thrice = estimate("1"), estimate("3")
    assert 2 * once < thrice <= 3 * once + 1  # the measured steps thrice, the preconditioning once
