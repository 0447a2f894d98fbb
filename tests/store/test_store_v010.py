"""A database written by ssdlab 0.1.0 (tests/data/db-v0.1.0.sqlite, made as
tests/data/make-db-v0.1.0.py says) opens and reports the same numbers today: its
records have no schema version, its step commands are bare lists, it has no
application id and no ssdlab_version column.

The fixture is never opened in place: the read commands get a copy (and must leave
it as it was), the writer migrates another copy."""

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from ssdlab.store import Store
from ssdlab.store.migrations import APPLICATION_ID, MIGRATIONS
from tests.conftest import run_cli, table_column
from tests.paths import DB_V010 as FIXTURE

FIXTURE_SHA256 = "5c3c713e4ba30719448925462121a52f1bbf0e146b4013180161d6aa5448b719"

# compare 1 2 3 4 as 0.1.0 printed it: each test's primary score (MB/s) per run
SCORES = {
    "rand-read-burst": [107.49, 106.78, 67.75, 58.56],
    "seq-write-sustained": [4767.43, 3149.28, None, None],
    "mixed-random": [542.35, 559.2, None, None],
    "whole-drive-fill": [4947.67, 3131.18, None, None],
    "rand-read-sustained": [None, None, 158.71, None],
    "rand-write-burst": [None, None, 336.76, None],
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def copy(tmp_path):
    assert sha256(FIXTURE) == FIXTURE_SHA256, "the fixture must stay what 0.1.0 wrote"
    path = tmp_path / "ssdlab.db"
    shutil.copy(FIXTURE, path)
    yield path
    assert sha256(FIXTURE) == FIXTURE_SHA256


def test_runs_lists_the_four_runs(copy):
    runs = json.loads(run_cli("runs", "--json", db=copy).stdout)
    assert [(r["id"], r["name"], r["target_kind"], r["tests_done"], r["tests"]) for r in runs] == [
        (1, "quick reference", "sim", 4, 4), (2, "980 pro", "sim", 4, 4),
        (3, "stopped half-way", "sim", 3, 11), (4, "fio on a file", "file", 1, 1)]
    assert [runs[i]["status"] for i in (0, 1, 3)] == ["done"] * 3
    assert runs[2]["status"] == "interrupted"  # stopped half-way; no process holds it
    assert {r["ssdlab_version"] for r in runs} == {"0.1.0"}
    assert [r["host"] for r in runs] == [None] * 4  # 0.1.0 recorded no host name
    assert table_column(run_cli("runs", db=copy).stdout, "host") == [""] * 4


def test_show_gives_each_tests_state_and_score(copy):
    doc = json.loads(run_cli("show", "3", "--json", db=copy).stdout)
    statuses = [t["status"] for t in doc["tests"]]
    assert statuses == ["done"] * 3 + ["running"] + ["pending"] * 7
    assert [t["primary_score"]["value"] for t in doc["tests"][:3]] == [67.75, 158.71, 336.76]
    assert doc["run"]["identity"]["preset"] == "wd-sn850-1tb"


def test_export_gives_every_step_its_result_and_commands(copy):
    sim = json.loads(run_cli("export", "1", "--format", "json", db=copy).stdout)
    assert [(t["id"], len(t["steps"])) for t in sim["tests"]] == [
        ("rand-read-burst", 3), ("seq-write-sustained", 8), ("mixed-random", 13),
        ("whole-drive-fill", 2)]
    precondition = sim["tests"][0]["steps"][1]
    assert (precondition["label"], precondition["result"]["iops"], precondition["result"]["mbps"]) \
        == ("write 256 MiB", 38182.7, 5004.68)
    assert precondition["commands"] == ["sim wd-sn850-1tb: write bs=128 KiB QD32 over 256 MiB"]
    assert sim["tests"][2]["primary_score"]["curve"]["50"] == 427.07
    assert sim["engine"]["simulator_version"] == "0.1.0"

    fio = json.loads(run_cli("export", "4", "--format", "json", db=copy).stdout)
    assert fio["engine"] == {"engine": "fio", "fio_version": "fio-3.33", "ioengine": "io_uring"}
    steps = fio["tests"][0]["steps"]
    assert [s["label"] for s in steps] == ["purge", "write 256 MiB", "32 bursts of 1 MiB"]
    assert steps[1]["result"]["mbps"] == 1945.18
    assert steps[1]["commands"][0].startswith("[write_256_MiB]\nfilename=")


def test_compare_gives_the_scores_0_1_0_gave(copy):
    doc = json.loads(run_cli("compare", "1", "2", "3", "4", "--json", db=copy).stdout)
    scores = {t["id"]: [c and c["value"] for c in t["runs"]] for t in doc["tests"]}
    assert {test: scores[test] for test in SCORES} == SCORES


def test_report_covers_every_run_and_test(copy, tmp_path):
    out = run_cli("report", "1", "2", "3", "4", "-o", tmp_path / "r.html", db=copy).stdout
    assert "11 tests" in " ".join(out.split())
    html = (tmp_path / "r.html").read_text()
    assert all(label in html for label in ("#1 quick reference", "#2 980 pro",
                                           "#3 stopped half-way", "#4 fio on a file"))
    assert html.count("<td>ssdlab version</td><td>0.1.0</td>") == 4  # in each run's conditions


def test_reading_leaves_it_as_0_1_0_wrote_it(copy, tmp_path):
    for args in (("runs",), ("show", "3"), ("export", "1"), ("compare", "1", "2"),
                 ("report", "1", "-o", tmp_path / "r.html")):
        run_cli(*args, db=copy)
    assert sha256(copy) == FIXTURE_SHA256


def test_a_writer_migrates_it_and_a_resume_finishes_the_stopped_run(copy):
    run_cli("resume", "3", db=copy)
    with closing(sqlite3.connect(copy)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    with Store.open_existing(copy) as store:
        assert [r.status.value for r in store.tests(3)] == ["done"] * 11
        assert store.tests(1)[0].score["value"] == 107.49
        assert store.steps(1, 0)[1].commands == (
            "sim wd-sn850-1tb: write bs=128 KiB QD32 over 256 MiB",)
