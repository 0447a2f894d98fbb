"""Several simulated drives in one `ssdlab run`, side by side: the same results as one
at a time, at once when cores allow, in the order given, refused before anything runs
when a target or option does not fit, and stoppable like a single run."""

import json
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.session import RunRequest
from ssdlab.side_by_side import SIM_BYTES_PER_TB, plan
from ssdlab.units import GiB
from tests.conftest import run_cli
from tests.end_to_end.test_locks import said, wait_for

DRIVES = ["sim:wd-sn850-1tb", "sim:samsung-980-1tb"]
QUICK = ["--suite", "quick", "--scale", "0.01", "--json"]


def step_results(doc: dict) -> list:
    """Every step's result but the wall-clock time it started at."""
    return [[{k: v for k, v in step["result"].items() if k != "started_at"} for step in test["steps"]]
            for test in doc["tests"]]


def test_drives_side_by_side_give_the_results_of_one_at_a_time_numbered_in_order(tmp_path):
    together = json.loads(run_cli("run", *DRIVES, *QUICK, db=tmp_path / "together.db").stdout)
    assert [d["run"]["id"] for d in together] == [1, 2]
    assert [d["run"]["target"] for d in together] == DRIVES
    assert {d["run"]["status"] for d in together} == {"done"}
    for drive, doc in zip(DRIVES, together):
        alone = json.loads(run_cli("run", drive, *QUICK, db=tmp_path / f"{drive[4:]}.db").stdout)
        assert step_results(doc) == step_results(alone)


def overlapped(db) -> bool:
    """Did the two runs' tests run at the same time (the second's first test starting before
    the first's last ended)?"""
    with closing(sqlite3.connect(db)) as con:
        first_end = con.execute("SELECT max(finished_at) FROM tests WHERE run_id = 1").fetchone()[0]
        second_start = con.execute("SELECT min(started_at) FROM tests WHERE run_id = 2").fetchone()[0]
    return second_start < first_end


@pytest.mark.parametrize("jobs, together", [("2", True), ("1", False)])
def test_jobs_says_how_many_drives_run_at_once(tmp_path, jobs, together):
    db = tmp_path / "runs.db"
    run_cli("run", *DRIVES, *QUICK, "--jobs", jobs, db=db)
    assert overlapped(db) is together


@pytest.mark.parametrize("args, says", [
    (["sim:wd-sn850-1tb", "/var/tmp/drive.img"], "/var/tmp/drive.img is not"),
    (["sim:wd-sn850-1tb", "sim:no-such-drive"], "no-such-drive"),
    ([*DRIVES, "--jobs", "0"], "--jobs must be 1 to 64, not 0"),
    ([*DRIVES, "--jobs", "65"], "--jobs must be 1 to 64, not 65"),
    ([*DRIVES, "--power-meter", "hwmon:/sys/class/hwmon/hwmon0"], "--power-meter measures a real drive"),
    ([*DRIVES, "--ambient-c", "200"], "--ambient-c must be"),
])
def test_a_target_or_option_that_does_not_fit_is_refused_before_anything_runs(tmp_path, args, says):
    db = tmp_path / "runs.db"
    proc = run_cli("run", *args, "--suite", "quick", "--scale", "0.01", db=db, check=False)
    assert proc.returncode == SsdlabError.exit_code, proc.stderr
    assert says in said(proc.stderr) and "Traceback" not in proc.stderr
    assert not db.exists()


def test_a_dry_run_plans_every_drive(tmp_path):
    docs = json.loads(run_cli("run", *DRIVES, *QUICK, "--dry-run", db=tmp_path / "runs.db").stdout)
    assert [d["target"] for d in docs] == DRIVES
    assert all(d["clock"] == "drive" and len(d["tests"]) == 4 for d in docs)
    assert not (tmp_path / "runs.db").exists()


def test_memory_limits_how_many_run_at_once(tmp_path):
    meminfo = tmp_path / "meminfo"
    request = RunRequest(target="", suite="quick")
    need = SIM_BYTES_PER_TB  # each preset is 1 TB
    meminfo.write_text(f"MemTotal: 99999999 kB\nMemAvailable: {(need * 2 + GiB) // 1024} kB\n")
    assert plan(DRIVES * 2, request, 4, meminfo).jobs == 2
    meminfo.write_text(f"MemAvailable: {(need + GiB) // 1024} kB\n")
    fewer = plan(DRIVES * 2, request, 4, meminfo)
    assert fewer.jobs == 1 and "running 1 at a time, not 4" in fewer.note
    # Where the kernel does not say, the cores decide.
    meminfo.write_text("nothing here\n")
    assert plan(DRIVES, request, 2, meminfo).jobs == 2


def test_an_interrupt_stops_every_run_resumably_and_starts_no_more(tmp_path):
    db = tmp_path / "runs.db"
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", *DRIVES, "sim:crucial-p1-1tb", "--jobs", "1",
                             "--suite", "quick", "--scale", "0.2", "--json", "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: db.exists() and started_tests(db) > 0, proc, "the first run's first test")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    message = said(stderr)
    assert "sim:wd-sn850-1tb: run 1: run 1 interrupted" in message and "ssdlab resume 1" in message
    assert "sim:samsung-980-1tb: not started: interrupted" in message
    assert "sim:crucial-p1-1tb: not started: interrupted" in message
    assert json.loads(stdout) == []
    runs = json.loads(run_cli("runs", "--json", db=db).stdout)
    assert [(r["id"], r["status"]) for r in runs] == [(1, "interrupted")]
    run_cli("resume", "1", db=db)


def started_tests(db) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        try:
            return con.execute("SELECT count(*) FROM tests WHERE started_at IS NOT NULL").fetchone()[0]
        except sqlite3.OperationalError:  # not yet made
            return 0
