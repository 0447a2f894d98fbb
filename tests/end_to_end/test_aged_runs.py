"""`ssdlab run sim:PRESET --age AGE`: the simulated drive worn before the first test, kept with
the run (show, the report, resume), and every age it cannot take refused before anything is
made. The small preset wears as the SN850 does (its cache retired beyond 2000 P/E); its whole
fill takes a tenth of a second."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ssdlab.catalogue import Scale
from ssdlab.errors import SsdlabError
from ssdlab.model import Age
from ssdlab.session import RunRequest, _stored_age, dry_run_document
from tests.cli.test_cli_input import refused
from tests.conftest import run_cli
from tests.paths import SMALL_PRESET

SIM = f"sim:{SMALL_PRESET}"


def fill(db: Path, *options: str) -> dict:
    """whole-drive-fill on the small preset at scale 1; the run as `show --json` gives it."""
    run_cli("run", SIM, "--tests", "whole-drive-fill", *options, db=db)
    return shown(db)


def shown(db: Path) -> dict:
    return json.loads(run_cli("show", "latest", "--json", db=db).stdout)


@pytest.fixture(scope="module")
def aged(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("aged") / "ssdlab.db"
    fill(db, "--age", "2000pe")
    return db


def test_the_drive_is_worn_before_the_first_test(aged, tmp_path):
    doc = shown(aged)
    (test,) = doc["tests"]
    assert doc["engine"]["age"] == "2000pe" and "age=2000pe" in run_cli("show", "latest", db=aged).stdout
    assert 66 <= test["health"]["before"]["percentage_used"] <= 67  # 2000 of the 3000 rated cycles
    young = fill(tmp_path / "young.db")["tests"][0]
    assert "age" not in shown(tmp_path / "young.db")["engine"]
    assert young["health"]["before"]["percentage_used"] == 0
    # the cache is retired beyond 2000 P/E: the young fill has one, the aged none
    assert young["primary_score"]["slc_cache_gib"] > 4 and test["primary_score"]["slc_cache_gib"] is None
    assert [p["kind"] for p in young["primary_score"]["phases"]][0] == "cache"
    assert "cache" not in [p["kind"] for p in test["primary_score"]["phases"]]


def test_the_report_names_the_age_with_the_engine(aged, tmp_path):
    run_cli("report", "latest", "-o", tmp_path / "report.html", db=aged)
    assert "<td>engine age</td><td>2000pe</td>" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_resume_rebuilds_the_aged_drive(tmp_path):
    db = tmp_path / "ssdlab.db"
    fill(db, "--age", "80%")
    conn = sqlite3.connect(db)
    with conn:  # as a crash in the fill would leave it
        conn.execute("UPDATE tests SET status = 'running', score = NULL")
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL")
    conn.close()
    run_cli("resume", "latest", db=db)
    doc = shown(db)
    (test,) = doc["tests"]
    assert doc["run"]["status"] == "done" and doc["engine"]["age"] == "80%"
    assert test["health"]["before"]["percentage_used"] == 80 and test["primary_score"]["slc_cache_gib"] is None


def test_the_dry_run_says_the_drive_is_aged():
    plan = json.loads(run_cli("run", SIM, "--suite", "quick", "--scale", "0.01", "--age", "80%", "--dry-run",
                              "--json").stdout)
    assert plan["age"] == "80%"
    assert "worn to 400TBW before the first test" in run_cli("run", SIM, "--suite", "quick", "--scale", "0.01",
                                                             "--age", "400TBW", "--dry-run").stdout
    assert "age" not in dry_run_document(RunRequest(target=SIM, suite="quick", scale=Scale(0.01)))


def test_a_real_target_is_refused_before_anything_is_made(scratch):
    target, db = scratch / "drive.img", scratch / "ssdlab.db"
    for extra in ((), ("--dry-run",)):
        refused(run_cli("run", target, "--scale", "0.01", "--age", "2000pe", *extra, db=db, check=False),
                "--age", "a real drive ages by writing (the endurance suite)")
    assert not target.exists() and not db.exists()


@pytest.mark.parametrize(("target", "age", "says"), [
    (SIM, "5years", "--age: age '5years': give 2000pe (P/E cycles), 80% (of the rated cycles) or 400TBW"),
    (SIM, "-5pe", "--age: age '-5pe': give 2000pe"),
    (SIM, "9000pe", "--age 9000pe leaves the drive read-only: its spare runs out at about"),
    (SIM, "1000%", "P/E cycles, and it takes no writes beyond. Give a lower age"),
    ("sim:generic-qlc-1tb", "100TBW", "--age 100TBW: the preset rates no TBW"),
])
def test_an_age_the_drive_cannot_take_is_refused_and_nothing_stored(tmp_path, target, age, says):
    db = tmp_path / "ssdlab.db"
    refused(run_cli("run", target, "--tests", "whole-drive-fill", "--age", age, db=db, check=False), says)
    assert not db.exists()


def test_side_by_side_refuses_an_age_one_drive_cannot_take_before_any_run(tmp_path):
    db = tmp_path / "ssdlab.db"
    refused(run_cli("run", SIM, "sim:generic-qlc-1tb", "--tests", "whole-drive-fill", "--age", "100TBW",
                    db=db, check=False), "the preset rates no TBW")
    assert not db.exists()


def test_the_stored_age_is_read_back_as_given_or_refused_plainly():
    age = Age.parse("1234567.5pe")  # more digits than `str` shows: the options keep the number
    assert _stored_age(age.model_dump(mode="json"), 3) == age and _stored_age(None, 3) is None
    with pytest.raises(SsdlabError, match="^the simulated drive's age stored with run 3: value: "):
        _stored_age({"value": -1, "unit": "pe"}, 3)
