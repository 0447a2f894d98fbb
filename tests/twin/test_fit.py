"""`ssdlab fit`: a twin of a simulated drive whose truth is known. The truth is the Crucial P5
Plus preset with three values changed; its runs are the data; the fit starts from the
unchanged preset. The values the runs determine come back, the twin reproduces the runs and
predicts a test it was not fitted to, and what the runs cannot tell stays typical, said so."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import pytest

from ssdlab.distributed.overrides import apply_overrides
from ssdlab.presets import load_preset
from tests.conftest import run_cli

TRUTH = {"drive.nand.slc.t_prog_us": 350.0, "drive.nand.slc.t_read_us": 36.0,
         "drive.controller.write_latency_us": 12.0}  # the P5 Plus preset's: 280, 28 and 8
FITTED = "seq-write-burst,rand-write-burst,rand-read-burst,seq-read-burst,seq-write-sustained"
HELD_OUT = "rand-read-sustained"
SCALE = "0.01"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """The truth's run, the twin fitted to it, the fit's report and the twin's file."""
    tmp = tmp_path_factory.mktemp("twin")
    truth = tmp / "truth.toml"
    truth.write_text(apply_overrides(load_preset("crucial-p5plus-1tb"), TRUTH))
    db = tmp / "ssdlab.db"
    run_cli("run", f"sim:{truth}", "--tests", f"{FITTED},{HELD_OUT}", "--scale", SCALE, db=db)
    twin = tmp / "twin.toml"
    report = json.loads(run_cli("fit", "1", "-o", twin, "--base", "crucial-p5plus-1tb", "--hold-out", HELD_OUT,
                                "--json", db=db).stdout)
    return db, twin, report


def test_the_values_the_runs_determine_come_back(fitted):
    _, _, report = fitted
    found = {p["key"]: p for p in report["parameters"]}
    for key, true in TRUTH.items():
        assert found[key]["determined"], found[key]
        assert found[key]["value"] == pytest.approx(true, rel=0.10), key


def test_the_twin_reproduces_its_runs_and_predicts_the_held_out_test(fitted):
    _, _, report = fitted
    for unit, within, predicted in (("MB/s", 0.05, 0.15), ("°C", 1.0, 2.0)):  # rates' shares, kelvins
        rows = [t for t in report["tests"] if t["unit"] == unit]
        by_use = {use: [t["median_error"] for t in rows if t["held_out"] is use] for use in (False, True)}
        assert statistics.median(abs(e) for e in by_use[False]) <= within, rows
        assert [abs(e) for e in by_use[True]] and all(abs(e) <= predicted for e in by_use[True]), rows


def test_what_the_runs_cannot_tell_stays_typical_and_the_twin_says_so(fitted):
    _, twin, report = fitted
    kept = [p["key"] for p in report["parameters"] if not p["determined"]]
    assert "drive.cache.max_cell_share" in kept  # nothing filled the cache
    assert report["cache"] == "no whole-drive fill that went past the cache: the base's cache size kept"
    text = twin.read_text()
    assert "typical value, the base's (crucial-p5plus-1tb): the runs do not determine it" in text
    assert text.count("fitted to run 1") == len(report["parameters"]) - len(kept)
    assert "# A simulated twin of " in text and 'name = "Twin of ' in text


def test_the_twin_is_a_preset_like_any_other_whose_runs_name_where_it_came_from(fitted, tmp_path):
    db, twin, _ = fitted
    run_cli("run", f"sim:{twin}", "--tests", HELD_OUT, "--scale", SCALE, db=tmp_path / "ssdlab.db")
    shown = json.loads(run_cli("show", "latest", "--json", db=tmp_path / "ssdlab.db").stdout)
    assert shown["run"]["status"] == "done"
    assert shown["run"]["identity"]["twin_of"] == (
        f"a twin of Crucial P5 Plus 1 TB, fitted by `ssdlab fit` from crucial-p5plus-1tb to run 1 of {db.resolve()}")
    run_cli("report", "latest", "-o", tmp_path / "report.html", db=tmp_path / "ssdlab.db")
    assert "fitted by `ssdlab fit` from crucial-p5plus-1tb to run 1 of" in (tmp_path / "report.html").read_text()
    # what is slow, costly or destructive to ask of the drive: aged, under a trace
    run_cli("run", f"sim:{twin}", "--age", "2000pe", "--suite", "trace", "--scale", SCALE, db=tmp_path / "aged.db")
    aged = json.loads(run_cli("show", "latest", "--json", db=tmp_path / "aged.db").stdout)
    assert aged["run"]["status"] == "done" and aged["engine"]["age"] == "2000pe"
    assert aged["tests"] and all(t["status"] == "done" for t in aged["tests"])


def test_a_fit_killed_part_way_resumes_to_the_same_twin_measuring_only_what_is_missing(fitted, tmp_path):
    db, twin, report = fitted
    again = tmp_path / "twin.toml"
    record = tmp_path / "twin.toml.fit.json"
    argv = [sys.executable, "-m", "ssdlab", "fit", "1", "-o", str(again), "--base", "crucial-p5plus-1tb",
            "--hold-out", HELD_OUT, "--json", "--db", str(db)]
    killed = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "TMPDIR": str(tmp_path)})  # what it leaves, left here
    deadline = time.monotonic() + 120
    while not record.exists() and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.kill()
    killed.wait()
    assert record.exists() and not again.exists(), "the fit ended before it was killed"
    resumed = json.loads(run_cli("fit", "1", "-o", again, "--base", "crucial-p5plus-1tb", "--hold-out", HELD_OUT,
                                 "--json", db=db).stdout)
    assert 0 < resumed["evaluations"] < report["evaluations"]
    assert again.read_text() == twin.read_text()


@pytest.mark.parametrize("table, says", [
    ('runs = "1"', "runs: Input should be a valid list"),
    ('drive = "x"\nruns = [1]\ndatabase = "d"\nbase = "b"\ncolour = "red"', "colour: Extra inputs"),
])
def test_a_twin_table_ssdlab_did_not_write_is_refused_saying_how_to_mend_it(fitted, tmp_path, table, says):
    _, twin, _ = fitted
    text = twin.read_text()
    start = text.index("[twin]")
    end = text.find("\n[", start + 1)
    mended = tmp_path / "mended.toml"
    mended.write_text(text[:start] + "[twin]\n" + table + "\n" + (text[end:] if end >= 0 else ""))
    refused = run_cli("run", f"sim:{mended}", "--tests", HELD_OUT, "--scale", SCALE, db=tmp_path / "x.db",
                      check=False)
    assert refused.returncode == 2 and "the preset's [twin] table is not what `ssdlab fit` writes" in refused.stderr
    assert says in refused.stderr and "Traceback" not in refused.stderr


def test_a_fit_started_again_measures_nothing_twice(fitted):
    db, twin, report = fitted
    before = twin.read_text()
    again = json.loads(run_cli("fit", "1", "-o", twin, "--base", "crucial-p5plus-1tb", "--hold-out", HELD_OUT,
                               "--json", db=db).stdout)
    assert again["evaluations"] == 0 and report["evaluations"] > 0
    assert twin.read_text() == before


def test_runs_of_two_drives_are_refused(fitted):
    db, twin, _ = fitted
    run_cli("run", "sim:wd-sn850-1tb", "--tests", "seq-read-burst", "--scale", SCALE, db=db)
    refused = run_cli("fit", "1", "2", "-o", twin.with_name("mixed.toml"), db=db, check=False)
    assert refused.returncode == 2 and "the runs are of different drives" in refused.stderr
    assert not twin.with_name("mixed.toml").exists()


@pytest.mark.parametrize("args, says", [
    (["--hold-out", "trim"], "--hold-out trim: not among the runs' finished tests"),
    (["--hold-out", f"{FITTED},{HELD_OUT}"], "--hold-out leaves no test to fit"),
    (["-o", "twin.json"], "give a .toml file"),
])
def test_bad_input_is_one_line_saying_what_to_do(fitted, tmp_path, args, says):
    db, _, _ = fitted
    refused = run_cli("fit", "1", *(["-o", tmp_path / "t.toml"] if "-o" not in args else []), *args, db=db,
                      check=False)
    assert refused.returncode == 2 and says in " ".join(refused.stderr.split()), refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("record, says", [
    ('{"evaluations": {}}', "was written by another version of `ssdlab fit`: remove it"),
    ("{not json", "is not a fit's record"),
])
def test_a_record_the_fit_cannot_use_is_refused_and_kept(fitted, tmp_path, record, says):
    db, _, _ = fitted
    kept = tmp_path / "t.toml.fit.json"
    kept.write_text(record)
    refused = run_cli("fit", "1", "-o", tmp_path / "t.toml", db=db, check=False)
    assert refused.returncode == 2 and says in " ".join(refused.stderr.split()), refused.stderr
    assert kept.read_text() == record and not (tmp_path / "t.toml").exists()
